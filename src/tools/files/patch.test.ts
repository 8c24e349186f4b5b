import { describe, expect, it } from 'vitest'
import type { ToolError } from '../../core/errors'
import { applyLinePatches } from './patch'

const patch = (start_line: number, end_line: number, content: string) => ({ start_line, end_line, content })

describe('applyLinePatches', () => {
  it('uses original line numbers for every patch', () => {
    expect(applyLinePatches('1\n2\n3\n4\n', [patch(1, 1, 'one'), patch(3, 4, 'three\nfour\nmore')])).toBe(
      'one\n2\nthree\nfour\nmore\n',
    )
  })

  it('inserts with end_line = start_line - 1 and appends at total + 1', () => {
    expect(applyLinePatches('a\nb\n', [patch(2, 1, 'between'), patch(3, 2, 'after')])).toBe('a\nbetween\nb\nafter\n')
    expect(applyLinePatches('', [patch(1, 0, 'x')])).toBe('x\n')
  })

  it('keeps a missing final newline, also next to an append', () => {
    expect(applyLinePatches('a\nb', [patch(2, 2, 'B')])).toBe('a\nB')
    expect(applyLinePatches('a\nb', [patch(2, 2, 'B'), patch(3, 2, 'c')])).toBe('a\nB\nc')
  })

  it('deletes lines with empty content', () => {
    expect(applyLinePatches('a\nb\nc\n', [patch(2, 2, '')])).toBe('a\nc\n')
  })

  it('writes CRLF into CRLF files', () => {
    expect(applyLinePatches('a\r\nb\r\n', [patch(1, 1, 'x\ny')])).toBe('x\r\ny\r\nb\r\n')
  })

  it('applies a patch of any number of lines, and many patches, in one linear pass', () => {
    const many = Array.from({ length: 200_000 }, (_, index) => `n${index}`)
    expect(applyLinePatches('a\nb\n', [patch(2, 2, many.join('\n'))])).toBe(`a\n${many.join('\n')}\n`)
    const file = `${Array.from({ length: 2000 }, (_, index) => `l${index + 1}`).join('\n')}\n`
    const every = Array.from({ length: 1000 }, (_, index) => patch(index * 2 + 1, index * 2 + 1, `L${index * 2 + 1}`))
    const expected = Array.from({ length: 2000 }, (_, index) => (index % 2 === 0 ? `L${index + 1}` : `l${index + 1}`))
    expect(applyLinePatches(file, every)).toBe(`${expected.join('\n')}\n`)
  })

  it('refuses overlaps, shared start lines and out-of-range lines with the patch index', () => {
    const failure = (text: string, patches: ReturnType<typeof patch>[]) => {
      try {
        applyLinePatches(text, patches)
      } catch (error) {
        return error as ToolError
      }
      throw new Error('expected a ToolError')
    }
    expect(failure('1\n2\n3\n', [patch(1, 2, 'a'), patch(2, 3, 'b')]).details).toEqual({
      field: 'patches.1.start_line',
    })
    expect(failure('1\n2\n3\n', [patch(2, 1, 'a'), patch(2, 2, 'b')]).code).toBe('validation')
    expect(failure('1\n2\n', [patch(4, 4, 'a')]).details).toEqual({ field: 'patches.0.start_line' })
    expect(failure('1\n2\n', [patch(1, 3, 'a')]).details).toEqual({ field: 'patches.0.end_line' })
    expect(failure('1\n2\n', [patch(2, 0, 'a')]).details).toEqual({ field: 'patches.0.end_line' })
  })
})
