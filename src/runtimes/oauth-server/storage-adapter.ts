import { createHash } from 'node:crypto'
import type { Adapter, AdapterPayload } from 'oidc-provider'
import { errors } from 'oidc-provider'
import { retryOnConflict } from '../../storage/compare-and-swap'
import { oauthKeys } from '../../storage/layout'
import type { ObjectStore } from '../../storage/store'

interface Stored {
  payload: AdapterPayload
  /** Epoch ms; absent: kept until destroyed. */
  expiresAt?: number
}

/** Ids are the provider's (random, sometimes long): keys use their digest, never the id itself. */
const digest = (value: string) => createHash('sha256').update(value).digest('base64url')

/**
 * oidc-provider's storage on the bucket, so that any instance serves any step of a sign-in (Node
 * fleets, Lambda). One JSON object per record; a grant's members are indexed under it so revoking the
 * grant finds them. A code or refresh token is consumed by compare-and-swap: of two requests racing
 * with the same one, exactly one wins and the other gets invalid_grant, never a second token.
 */
export function createStorageAdapterFactory(storage: ObjectStore, now: () => number = Date.now) {
  const decoder = new TextDecoder()

  async function read(key: string): Promise<{ stored: Stored; etag: string } | undefined> {
    const object = await storage.get(key)
    if (!object) return undefined
    try {
      const stored = JSON.parse(decoder.decode(object.body)) as Stored
      if (stored.expiresAt !== undefined && stored.expiresAt <= now()) {
        await storage.delete(key, { ifMatch: object.etag }).catch(() => {})
        return undefined
      }
      return { stored, etag: object.etag }
    } catch {
      return undefined
    }
  }

  return (model: string): Adapter => {
    const keyOf = (id: string) => oauthKeys.record(model, digest(id))
    return {
      async upsert(id, payload, expiresIn) {
        const stored: Stored = {
          payload,
          ...(expiresIn ? { expiresAt: now() + expiresIn * 1000 } : {}),
        }
        await storage.put(keyOf(id), JSON.stringify(stored), { contentType: 'application/json' })
        if (payload.grantId) {
          await storage.put(oauthKeys.grantMember(digest(payload.grantId), model, digest(id)), keyOf(id))
        }
        if (payload.uid) await storage.put(oauthKeys.record(`${model}-uid`, digest(payload.uid)), id)
      },
      async find(id) {
        return (await read(keyOf(id)))?.stored.payload
      },
      async findByUid(uid) {
        const pointer = await storage.get(oauthKeys.record(`${model}-uid`, digest(uid)))
        if (!pointer) return undefined
        return (await read(keyOf(decoder.decode(pointer.body))))?.stored.payload
      },
      async findByUserCode() {
        // The device flow is not offered.
        return undefined
      },
      async consume(id) {
        await retryOnConflict(async () => {
          const current = await read(keyOf(id))
          if (!current) throw new errors.InvalidGrant('grant request is invalid')
          if (current.stored.payload.consumed) throw new errors.InvalidGrant('grant request is invalid')
          const stored = {
            ...current.stored,
            payload: { ...current.stored.payload, consumed: Math.floor(now() / 1000) },
          }
          await storage.put(keyOf(id), JSON.stringify(stored), {
            contentType: 'application/json',
            ifMatch: current.etag,
          })
        })
      },
      async destroy(id) {
        await storage.delete(keyOf(id))
      },
      async revokeByGrantId(grantId) {
        const folder = oauthKeys.grantFolder(digest(grantId))
        let cursor: string | undefined
        do {
          const page = await storage.list(folder, cursor ? { cursor } : {})
          for (const entry of page.objects) {
            const member = await storage.get(entry.key)
            if (member) await storage.delete(decoder.decode(member.body))
            await storage.delete(entry.key)
          }
          cursor = page.cursor
        } while (cursor)
      },
    }
  }
}
