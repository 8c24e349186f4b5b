import pino from 'pino'
import type { Logger } from './tools/tool'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

/**
 * JSON lines through pino, the format log collectors (CloudWatch, Loki) ingest as is. Secrets are
 * never passed to the logger; the redaction list is a second line of defence for fields that must
 * not appear even by mistake.
 */
export function createJsonLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}): Logger {
  const logger = pino({
    level,
    base,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: [
        'authorization',
        'key',
        'api_key',
        'token',
        'secret',
        'password',
        'content',
        '*.authorization',
        '*.key',
        '*.content',
      ],
      censor: '[redacted]',
    },
  })
  return {
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
  }
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} }

/** An error as a log field: JSON.stringify of an Error would show none of its name, message or stack. */
export function describeCause(cause: unknown): unknown {
  if (cause instanceof Error) return { name: cause.name, message: cause.message, stack: cause.stack }
  return cause
}
