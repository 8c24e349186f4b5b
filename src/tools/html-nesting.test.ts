import { describe, expect, it } from 'vitest'
import { ToolError } from '../core/errors'
import { assertHtmlNesting, maxHtmlNesting } from './html-nesting'

const refused = (html: string) => {
  try {
    assertHtmlNesting(html, 'content')
    return false
  } catch (error) {
    if (!(error instanceof ToolError)) throw error
    expect(error).toMatchObject({ code: 'validation', details: { field: 'content' } })
    return true
  }
}
const nested = (depth: number, tag = 'div') => `${`<${tag} class="x">`.repeat(depth)}x${`</${tag}>`.repeat(depth)}`

describe('HTML nesting', () => {
  it('takes what a browser builds, and refuses one level more', () => {
    expect(refused(nested(maxHtmlNesting))).toBe(false)
    expect(refused(nested(maxHtmlNesting + 1))).toBe(true)
    expect(refused(`<DIV>${'<Section>'.repeat(600)}`)).toBe(true)
  })

  it('does not count elements that do not nest as written: void, optional end tags, self-closed', () => {
    expect(refused('<p>one'.repeat(10_000))).toBe(false)
    expect(refused(`<ul>${'<li>item'.repeat(10_000)}</ul>`)).toBe(false)
    expect(refused(`<table>${'<tr><td>a<td>b'.repeat(5_000)}</table>`)).toBe(false)
    expect(refused('<br><img src="a.png"><input>'.repeat(5_000))).toBe(false)
    expect(refused('<svg><path d="M0 0"/></svg>'.repeat(5_000))).toBe(false)
    expect(refused('<div></div>'.repeat(100_000))).toBe(false)
  })

  it('closes what an end tag closes, left-open elements inside it included', () => {
    expect(refused('<div><b><i>text</div>'.repeat(5_000))).toBe(false)
  })

  it('skips comments and raw text, where tags are text', () => {
    expect(refused(`<!-- ${'<div>'.repeat(1_000)} -->`)).toBe(false)
    expect(refused(`<script>${'<div>'.repeat(1_000)}</SCRIPT><p>after`)).toBe(false)
    expect(refused(`<style>${'<div>'.repeat(1_000)}`)).toBe(false)
    expect(refused(`<textarea>${'<div>'.repeat(1_000)}</textarea>${nested(600)}`)).toBe(true)
  })

  it('reads hostile input in one pass: unclosed tags, quotes and comments', () => {
    expect(refused('<a'.repeat(1_000_000))).toBe(false)
    expect(refused('<a title="'.repeat(200_000))).toBe(false)
    expect(refused('<!--'.repeat(500_000))).toBe(false)
    expect(refused('<script>'.repeat(500_000))).toBe(false)
  })
})
