import { describe, expect, it } from 'vitest'
import { pooledIdGenerator } from './otel-ids'

describe('pooledIdGenerator', () => {
  it('draws W3C-shaped ids, none repeated across several pools', () => {
    const ids = pooledIdGenerator()
    const spans = new Set<string>()
    const traces = new Set<string>()
    // 3,000 span ids and 1,000 trace ids: past the 4 KB pool several times.
    for (let index = 0; index < 3000; index++) spans.add(ids.generateSpanId())
    for (let index = 0; index < 1000; index++) traces.add(ids.generateTraceId())
    expect(spans.size).toBe(3000)
    expect(traces.size).toBe(1000)
    for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/)
    for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/)
    expect([...spans].some((id) => id === '0'.repeat(16))).toBe(false)
  })

  it('gives two generators different ids', () => {
    expect(pooledIdGenerator().generateTraceId()).not.toBe(pooledIdGenerator().generateTraceId())
  })
})
