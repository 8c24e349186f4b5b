import { describe, expect, it } from 'vitest'
import { referenceField, referenceTool } from './reference-names'

describe('reference names', () => {
  it('maps the reference spellings it lists, and nothing an object inherits', () => {
    expect(referenceField('filePath', ['path', 'content'])).toBe('path')
    expect(referenceField('filePath', ['output_path'])).toBe('output_path')
    expect(referenceField('filePath', ['content'])).toBeUndefined()
    for (const inherited of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(referenceField(inherited, ['path'])).toBeUndefined()
      expect(referenceTool(inherited)).toBeUndefined()
    }
    expect(referenceTool('shell')?.name).toBe('execute_command')
  })
})
