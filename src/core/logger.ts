/**
 * The logger every layer receives (never a global): three levels with structured fields. The runtimes
 * implement it with pino (src/runtimes/json-logger.ts); tests pass silentLogger.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} }

/** An error as a log field: JSON.stringify of an Error would show none of its name, message or stack. */
export function describeCause(cause: unknown): unknown {
  if (cause instanceof Error) return { name: cause.name, message: cause.message, stack: cause.stack }
  return cause
}
