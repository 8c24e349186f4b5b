import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { ClientReport } from './steps'

const folder = fileURLToPath(new URL('./python/', import.meta.url))
const python = `${folder}.venv/bin/python`

/**
 * The steps with the Python MCP SDK (`mcp` 2.3.0) in its own venv: client.py speaks 2025-11-25 through
 * initialize, the 70 s call as a task; client_auto.py lets the SDK negotiate (server/discover, so
 * 2026-07-28), the 70 s call kept open by progress. Its report is its one line of stdout.
 */
export async function runPython(url: string, key: string, script = 'client.py'): Promise<ClientReport> {
  if (!existsSync(python)) {
    throw new Error(`The Python MCP client's venv is missing (${folder}.venv): run test/clients/python/setup.sh first.`)
  }
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      python,
      [`${folder}${script}`, `${url}/mcp`, key],
      { timeout: 170_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${script} failed (${error.message.split('\n')[0]}):\n${stderr}`))
        else resolve({ stdout, stderr })
      },
    )
  })
  const line = stdout.trim().split('\n').at(-1) ?? ''
  try {
    return JSON.parse(line) as ClientReport
  } catch {
    throw new Error(`${script} printed no JSON report:\nstdout: ${stdout}\nstderr: ${stderr}`)
  }
}
