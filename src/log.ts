import type { Logger } from './tools/tool'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

/** One JSON object per line on stdout/stderr: what log collectors (CloudWatch, Loki) ingest as is. */
export function createJsonLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}): Logger {
  const write = (at: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>) => {
    if (rank[at] < rank[level]) return
    const line = JSON.stringify({ time: new Date().toISOString(), level: at, msg: message, ...base, ...fields })
    if (at === 'error' || at === 'warn') console.error(line)
    else console.log(line)
  }
  return {
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  }
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} }
