import pino from 'pino'
import { type ProcessSettings, processSettings } from '../config/process-settings'
import type { Logger } from '../core/logger'
import type { Environment, Runtime } from '../core/settings'
import { loadSettings } from '../core/settings'

export type LogLevel = ProcessSettings['logLevel']

const redactedKeys = ['authorization', 'key', 'api_key', 'token', 'secret', 'password', 'content']
const redactedNestedKeys = ['authorization', 'key', 'content']

/**
 * JSON lines through pino, the format log collectors (CloudWatch, Loki) ingest as is. Secrets are
 * never passed to the logger; the redaction list is a second line of defence for fields that must
 * not appear even by mistake. Redaction copies each object it is given, so fields it cannot change
 * (no redacted name at the top, no object below it, as in every access-log line) go through a twin
 * without it: same options, same stream, so the same line in the same order.
 */
export function createJsonLogger(
  level: LogLevel = 'info',
  base: Record<string, unknown> = {},
  destination?: pino.DestinationStream,
): Logger {
  const options = {
    level,
    base,
    timestamp: isoTimeOncePerMillisecond(),
    formatters: { level: (label: string) => ({ level: label }) },
  }
  const redact = { paths: [...redactedKeys, ...redactedNestedKeys.map((key) => `*.${key}`)], censor: '[redacted]' }
  const logger = destination ? pino({ ...options, redact }, destination) : pino({ ...options, redact })
  // The stream pino made (stdout) or was given: the twin writes to that very stream. pino's browser
  // build (Workers) has no streams and no symbols: there every line goes through the redacting logger.
  const streamSym = pino.symbols?.streamSym
  const stream = streamSym && (logger as unknown as Record<symbol, pino.DestinationStream>)[streamSym]
  const unredacted = stream ? pino(options, stream) : logger
  const to = (fields: Record<string, unknown>) => (redactionChanges(fields) ? logger : unredacted)
  return {
    info: (message, fields = {}) => to(fields).info(fields, message),
    warn: (message, fields = {}) => to(fields).warn(fields, message),
    error: (message, fields = {}) => to(fields).error(fields, message),
  }
}

/** Whether the redaction paths could touch `fields`: a redacted name at the top, or any object below it. */
function redactionChanges(fields: Record<string, unknown>): boolean {
  for (const key in fields) {
    const value = fields[key]
    if (redactedKeys.includes(key) || (typeof value === 'object' && value !== null)) return true
  }
  return false
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
