import type { Principal } from '../../auth/principal'
import { ToolError } from '../../core/errors'
import { readRecord, retryOnConflict, writeRecord } from '../../storage/compare-and-swap'
import { isRecordId } from '../../storage/json-records'
import { mcpSessionKeys } from '../../storage/layout'
import type { ObjectStore } from '../../storage/store'

/**
 * MCP sessions of 2025 clients, kept in the bucket so that any instance answers any request of one:
 * the session id is handed out at initialize, and the only thing a session holds is the resources it
 * subscribed to (with the version of each the client was last told of). Every other request of a
 * session needs nothing of it, so toolport looks a session up only where a session is the point:
 * subscribing, its standing GET stream, and DELETE.
 */
export interface McpSession {
  id: string
  tenant: string
  /** The key (or OAuth subject) that opened it: no other may use it. */
  owner: string
  expiresAt: string
  /** Each subscribed URI and the version the client last heard of (surface.ts versionOf). */
  watched: Record<string, string>
}

/** How long a session lives after its last change or stream; its stream keeps it alive. */
export const sessionTtlMs = 24 * 60 * 60_000

/** Subscriptions one session may hold: each costs a storage request per poll. */
export const maxSubscriptions = 100

export interface McpSessions {
  /** A new session's id, its record stored. */
  open(principal: Principal): Promise<string>
  /** The session, if it exists, has not expired and belongs to this key; else a 404 problem. */
  load(principal: Principal, id: string): Promise<McpSession>
  /** Adds (or keeps) a subscription at the version read now. */
  subscribe(principal: Principal, id: string, uri: string, version: string): Promise<void>
  unsubscribe(principal: Principal, id: string, uri: string): Promise<void>
  /**
   * Records that the client is told `uri` changed from `seen` to `now`; false when another stream of
   * the session recorded it first (or the subscription is gone), so each change is told once.
   */
  tell(principal: Principal, id: string, uri: string, seen: string, now: string): Promise<boolean>
  /** Moves the expiry on, for a session whose stream is open. */
  touch(principal: Principal, id: string): Promise<void>
  end(principal: Principal, id: string): Promise<void>
}

export function createMcpSessions(storage: ObjectStore, now: () => number = Date.now): McpSessions {
  const keyOf = (principal: Principal, id: string) => mcpSessionKeys.record(principal.tenant, id)
  const expiry = () => new Date(now() + sessionTtlMs).toISOString()

  async function read(principal: Principal, id: string) {
    if (!isRecordId(id)) throw unknownSession()
    const record = await readRecord<McpSession>(storage, keyOf(principal, id))
    const session = record?.value
    if (!record || !session || session.owner !== principal.id) throw unknownSession()
    if (Date.parse(session.expiresAt) <= now()) {
      await storage.delete(keyOf(principal, id), { ifMatch: record.etag }).catch(() => {})
      throw unknownSession()
    }
    return { session, etag: record.etag }
  }

  /** Reads, changes and writes back the session by compare-and-swap; `change` false writes nothing. */
  function update(principal: Principal, id: string, change: (session: McpSession) => boolean): Promise<boolean> {
    return retryOnConflict(
      async () => {
        const { session, etag } = await read(principal, id)
        if (!change(session)) return false
        await writeRecord(storage, keyOf(principal, id), { ...session, expiresAt: expiry() }, etag)
        return true
      },
      { subject: 'The MCP session' },
    )
  }

  return {
    async open(principal) {
      const id = crypto.randomUUID()
      const session: McpSession = {
        id,
        tenant: principal.tenant,
        owner: principal.id,
        expiresAt: expiry(),
        watched: {},
      }
      await writeRecord(storage, keyOf(principal, id), session, undefined)
      return id
    },
    load: async (principal, id) => (await read(principal, id)).session,
    async subscribe(principal, id, uri, version) {
      await update(principal, id, (session) => {
        if (uri in session.watched) return false
        if (Object.keys(session.watched).length >= maxSubscriptions) {
          throw new ToolError('size_exceeded', `This MCP session holds ${maxSubscriptions} subscriptions already.`, {
            hint: 'Unsubscribe from resources the client no longer shows, or start another session.',
          })
        }
        session.watched[uri] = version
        return true
      })
    },
    async unsubscribe(principal, id, uri) {
      await update(principal, id, (session) => uri in session.watched && delete session.watched[uri])
    },
    tell: (principal, id, uri, seen, current) =>
      update(principal, id, (session) => {
        if (session.watched[uri] !== seen) return false
        session.watched[uri] = current
        return true
      }),
    async touch(principal, id) {
      await update(principal, id, () => true)
    },
    async end(principal, id) {
      await read(principal, id)
      await storage.delete(keyOf(principal, id))
    },
  }
}

function unknownSession(): ToolError {
  return new ToolError('not_found', 'There is no such MCP session (it ended, expired, or is not this key’s).', {
    hint: 'Send initialize again: its answer carries a new Mcp-Session-Id.',
  })
}
