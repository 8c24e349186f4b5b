export interface RateLimit {
  /** Calls allowed per window. */
  count: number
  windowSeconds: number
}

/** Parses "60/min", "10/s", "1000/hour" (TOOLPORT_RATE_LIMIT, TOOLPORT_OAUTH_RATE_LIMIT). */
export function parseRateLimit(value: string): RateLimit | undefined {
  const match = /^\s*(\d+)\s*\/\s*(s|sec|second|m|min|minute|h|hour)\s*$/i.exec(value)
  if (!match) return undefined
  const seconds: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600 }
  const count = Number(match[1])
  return count > 0 ? { count, windowSeconds: seconds[(match[2] as string).toLowerCase()] as number } : undefined
}
