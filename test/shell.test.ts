import { describe, expect, it } from 'vitest'
import { startTestServer } from './support/server'
import { shellContract } from './support/shell-contract'

// Real bubblewrap, real cgroups where the machine has them.
shellContract({ env: { TOOLPORT_SANDBOX: 'bwrap' }, sandboxUid: 1000 })

describe('image choice', () => {
  it('refuses an image where commands do not run in containers', async () => {
    const server = await startTestServer({ TOOLPORT_SANDBOX: 'bwrap' }, { shell: true })
    try {
      const result = await server.call('execute_command', { command: 'true', image: 'python:3.12' })
      expect(result.status).toBe(400)
      expect(result.body).toMatchObject({ code: 'validation', field: 'image' })
      expect(result.body.hint).toMatch(/Omit image/)
    } finally {
      await server.stop()
    }
  })
})

describe('without a sandbox', () => {
  it('answers 503 unavailable with a hint instead of running unsandboxed', async () => {
    const bare = await startTestServer({ TOOLPORT_SANDBOX: 'none' })
    try {
      const result = await bare.call('execute_command', { command: 'echo hi' })
      expect(result.status).toBe(503)
      expect(result.body.code).toBe('unavailable')
      expect(result.body.hint).toMatch(/bubblewrap|file tools/)
    } finally {
      await bare.stop()
    }
  })
})
