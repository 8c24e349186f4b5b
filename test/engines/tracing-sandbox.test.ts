import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newParent, type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver'
import { startTestServer, type TestServer } from '../support/server'

// Where an execute_command call spends its time, on real bubblewrap: the queue, the workspace checkout,
// the sandbox run and the commit are spans of the call, in the caller's trace.

const key = 'tracing-shell-key-0123456789'
let receiver: OtlpReceiver
let server: TestServer

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  server = await startTestServer(
    {
      TOOLPORT_API_KEYS: `acme=${key}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    },
    { shell: true },
  )
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
})

describe('an execute_command call, traced', () => {
  it('is a span whose children are the queue, the checkout, the sandbox run and the commit', async () => {
    const parent = newParent()
    const run = await server.call(
      'execute_command',
      { command: 'echo traced > out.txt; exit 3' },
      { key, headers: { traceparent: parent.traceparent } },
    )
    expect(run.status, JSON.stringify(run.body)).toBe(200)
    const spans = await receiver.spansUntil(parent.traceId, 'execute_tool execute_command')
    const call = spans.find((span) => span.name === 'execute_tool execute_command')
    expect(call?.parentSpanId).toBe(parent.spanId)
    const children = new Map(
      spans.filter((span) => span.parentSpanId === call?.spanId).map((span) => [span.name, span]),
    )
    for (const name of ['sandbox queue', 'workspace checkout', 'sandbox run', 'workspace commit']) {
      expect(children.has(name), name).toBe(true)
    }
    expect(children.get('sandbox run')?.attributes).toMatchObject({
      'process.exit.code': 3,
      'toolport.sandbox.timed_out': false,
    })
    expect(children.get('workspace commit')?.attributes).toMatchObject({ 'toolport.files.changed': 1 })
  })
})
