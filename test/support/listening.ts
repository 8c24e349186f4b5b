import type { ChildProcess } from 'node:child_process'

/**
 * Watches a started service (dist/node.js) for its `"msg":"listening"` log line and resolves with the
 * URL it names; rejects if the process exits first. `output()` is everything it printed so far, unless
 * `drain` is set: then stdout is only drained once the service listens (a long load would otherwise
 * keep its whole access log in memory).
 */
export function watchListening(
  child: ChildProcess,
  options: { drain?: boolean } = {},
): { url: Promise<string>; output: () => string } {
  let output = ''
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      // Only complete lines: a chunk may end in the middle of one.
      const line = output
        .split('\n')
        .slice(0, -1)
        .find((candidate) => candidate.includes('"msg":"listening"'))
      if (!line) return
      if (options.drain) {
        child.stdout?.off('data', onData)
        child.stdout?.resume()
      }
      resolve(JSON.parse(line).url)
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', options.drain ? () => {} : onData)
    child.once('exit', (code) => reject(new Error(`service exited with ${code}: ${output}`)))
  })
  return { url, output: () => output }
}
