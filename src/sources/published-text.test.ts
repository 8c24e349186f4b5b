import { describe, expect, it } from 'vitest'
import { declaredSchemas } from './kinds/declared-schemas'
import { planOperations } from './kinds/openapi-operations'
import { escapedUnpublishable, publishable, unpublishableCharacter } from './published-text'
import { compileSchema } from './schema-compiler'

describe('text published in a tool list', () => {
  it('finds control characters, DEL and C1, bidi controls and lone surrogates, but not pairs or line breaks in text', () => {
    expect(unpublishableCharacter('plain text, émoji 😀, 中文', 'text')).toBeUndefined()
    expect(unpublishableCharacter('two\nlines\twith a tab\r\n', 'text')).toBeUndefined()
    expect(unpublishableCharacter('two\nlines', 'line')).toBe('U+000A')
    expect(unpublishableCharacter('a\u0000', 'text')).toBe('U+0000')
    expect(unpublishableCharacter('a\u007f', 'text')).toBe('U+007F')
    expect(unpublishableCharacter('a\u0085', 'text')).toBe('U+0085')
    expect(unpublishableCharacter('a\u202eb', 'text')).toBe('U+202E')
    expect(unpublishableCharacter('a\u2067b', 'text')).toBe('U+2067')
    expect(unpublishableCharacter('a\ud800b', 'text')).toBe('U+D800')
    expect(unpublishableCharacter('a\udc00', 'text')).toBe('U+DC00')
  })

  it('cleans text of them, a line of its line breaks too, and spells them for an error', () => {
    expect(publishable('Re\u001b[1mad\u0007 \u202eme\u202c\ud800 😀\nok', 'text')).toBe('Re[1mad me 😀\nok')
    expect(publishable('A\t\ttitle\r\nhere', 'line')).toBe('A title here')
    expect(escapedUnpublishable('a\u0007b\nc😀')).toBe('a\\u0007b\\u000Ac😀')
  })

  it("cleans an OpenAPI document's summaries, descriptions and parameter descriptions", () => {
    const { plans } = planOperations(
      {
        openapi: '3.1.0',
        paths: {
          '/pets': {
            get: {
              operationId: 'listPets',
              summary: 'List\u001b[31m pets\nall',
              description: 'Lists \u202estep\u202c pets.\u0000',
              parameters: [{ name: 'limit', in: 'query', description: 'At\u0008 most', schema: { type: 'integer' } }],
            },
          },
        },
      },
      {},
    )
    expect(plans[0]).toMatchObject({ title: 'List[31m pets all', description: 'Lists step pets.' })
    // Parameter descriptions are cleaned where the schema is compiled, as declaredSchemas does for OpenAPI.
    const { input } = declaredSchemas({ name: 'listPets', input_schema: plans[0]?.input })
    expect(input.published).toMatchObject({ properties: { limit: { description: 'At most' } } })
    expect(() => compileSchema(plans[0]?.input, 'input_schema', { root: 'object' })).toThrow(
      'input_schema.properties.limit.description holds U+0008',
    )
  })
})
