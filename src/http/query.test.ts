import { describe, expect, it } from 'vitest'
import { knownQuery } from './query'

const names = ['workspace', 'async', 'dry_run', 'callback_url', '', 'a b', 'é', 'x=y']

describe('knownQuery', () => {
  it('reads every query as URLSearchParams does, with and without anything to decode', () => {
    const queries = [
      '',
      'workspace=bench',
      'workspace=bench&async=true',
      'workspace=',
      'workspace',
      '&&workspace=a&&',
      'workspace=a=b',
      'callback_url=https://example.com/hook?x=1',
      'workspace=a+b',
      'workspace=a%20b',
      'workspace=%zz',
      'workspace=%C3%A9',
      'workspace=%FF',
      'a+b=1',
      '%C3%A9=1',
      'x%3Dy=1',
      '=value',
      'workspace=日本',
    ]
    for (const query of queries) {
      const url = `http://127.0.0.1:8787/v1/tools/read_file?${query}#workspace=ignored`
      const expected = Object.fromEntries(new URLSearchParams(query))
      expect(knownQuery(url, names), query).toEqual(expected)
    }
  })

  it('refuses a parameter the route does not take, naming the closest one', () => {
    expect(() => knownQuery('http://h/x?workspaces=a', ['workspace'])).toThrow(
      expect.objectContaining({ code: 'validation', hint: expect.stringContaining('Did you mean workspace?') }),
    )
    expect(() => knownQuery('http://h/x?a%2Bb=1', ['a b'])).toThrow(expect.objectContaining({ code: 'validation' }))
  })

  it('refuses a parameter given twice, encoded or not', () => {
    for (const query of ['workspace=a&workspace=b', 'workspace=a&work%73pace=b', 'async=true&async']) {
      expect(() => knownQuery(`http://h/x?${query}`, names), query).toThrow(
        expect.objectContaining({ code: 'validation', message: expect.stringContaining('more than once') }),
      )
    }
  })

  it('answers an empty record for a URL without a query', () => {
    expect(knownQuery('http://h/x', names)).toEqual({})
    expect(knownQuery('http://h/x#a?b=c', names)).toEqual({})
  })
})
