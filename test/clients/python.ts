import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { ClientReport } from './steps'

const folder = fileURLToPath(new URL('./python/', import.meta.url))
const python = `${folder}.venv/bin/python`

/**
 * The steps with the Python MCP SDK (`mcp` 2.3.0, test/clients/python/client.py) in its own venv:
 * protocol 2025-11-25 through initialize, the 70 s call as a task. Its report is its one line of stdout.
 */
export async function runPython(url: string, key: string): Promise<ClientReport> {
  if (!existsSync(python)) {
    throw new Error(`The Python MCP client's venv is missing (${folder}.venv): run test/clients/python/setup.sh first.`)
  }
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      python,
      [`${folder}client.py`, `${url}/mcp`, key],
      { timeout: 170_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`client.py failed (${error.message.split('\n')[0]}):\n${stderr}`))
        else resolve({ stdout, stderr })
      },
    )
  })
  const line = stdout.trim().split('\n').at(-1) ?? ''
  try {
    return JSON.parse(line) as ClientReport
  } catch {
    throw new Error(`client.py printed no JSON report:\nstdout: ${stdout}\nstderr: ${stderr}`)
  }
}
