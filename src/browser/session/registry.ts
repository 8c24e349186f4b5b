/**
 * Where a fleet keeps track of browser sessions (a fleet engine implements it; a single instance has
 * none and counts its own sessions). It knows which instances are alive, so a session whose holder died
 * ends for its callers instead of answering "held elsewhere" forever, and how many sessions each tenant
 * holds across the fleet, so a per-tenant cap holds fleet-wide.
 */
export interface SessionRegistry {
  /**
   * Starts this instance's heartbeat. Each beat also renews the sessions `held()` lists, so the sessions
   * of an instance that stops beating drop out of every tenant's count.
   */
  join(instanceId: string, held: () => Array<{ id: string; tenant: string }>): void
  /** false once the instance has missed its heartbeats; undefined while that is not known (not yet, or unreachable). */
  alive(instanceId: string): boolean | undefined
  /**
   * Counts a new session for its tenant fleet-wide: true, or false when the tenant already holds `max`.
   * Throws when the registry cannot be reached.
   */
  claim(tenant: string, id: string, max: number): Promise<boolean>
  release(tenant: string, id: string): void
  /** Stops the heartbeat (the instance's sessions drop out when their renewals lapse). */
  leave(): void
}
