import pino from 'pino'
import { type ProcessSettings, processSettings } from '../config/process-settings'
import type { Logger } from '../core/logger'
import type { Environment, Runtime } from '../core/settings'
import { loadSettings } from '../core/settings'

export type LogLevel = ProcessSettings['logLevel']

/**
 * JSON lines through pino, the format log collectors (CloudWatch, Loki) ingest as is. Secrets are
 * never passed to the logger; the redaction list is a second line of defence for fields that must
 * not appear even by mistake.
 */
export function createJsonLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}): Logger {
  const logger = pino({
    level,
    base,
    timestamp: isoTimeOncePerMillisecond(),
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

/**
 * pino's isoTime, with the same output, formatted once per millisecond: a busy server writes many
 * lines within one, and the Date formatting was a visible share of a small call's access log.
 */
function isoTimeOncePerMillisecond(): () => string {
  let formattedAt = Number.NaN
  let formatted = ''
  return () => {
    const now = Date.now()
    if (now !== formattedAt) {
      formattedAt = now
      formatted = `,"time":"${new Date(now).toISOString()}"`
    }
    return formatted
  }
}

/**
 * The service's logger, at TOOLPORT_LOG_LEVEL. Made before the configuration is read, so that its
 * errors can be logged: an unreadable level falls back to info here, and loading the configuration
 * then refuses it with a message naming the variable.
 */
export function serviceLogger(env: Environment, runtime: Runtime): Logger {
  let level: LogLevel = 'info'
  try {
    level = loadSettings(processSettings, env, runtime).logLevel
  } catch {}
  return createJsonLogger(level, { service: 'toolport' })
}
