import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { Checkout } from '../../src/sandbox/mirror/mirror'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import { s3StorageFor, startS3rver } from './s3rver'

/** A storage backend under test, and how to take it down. */
export interface MirrorSubject {
  storage: ObjectStore
  cleanup: () => Promise<void>
}

/** The backends the mirror suites run on: fs storage in a temporary folder, and s3rver. */
export const mirrorDrivers: { name: string; setup: () => Promise<MirrorSubject> }[] = [
  {
    name: 'fs',
    setup: async () => {
      const directory = await mkdtemp(join(tmpdir(), 'toolport-mirror-fs-'))
      return {
        storage: await createFsStorage({ root: directory }),
        cleanup: () => rm(directory, { recursive: true, force: true }),
      }
    },
  },
  {
    name: 's3',
    setup: async () => {
      const server = await startS3rver()
      return { storage: s3StorageFor(server), cleanup: server.stop }
    },
  },
]

/**
 * Inside a describe: starts the backend and a scratch folder before the tests and removes both after;
 * checkouts pushed to `open` are released after each test, even one that failed midway, so a held
 * lock never wedges the next test.
 */
export function useMirrorSuite(setup: () => Promise<MirrorSubject>, scratchName: string) {
  let subject: MirrorSubject | undefined
  let scratch = ''
  const open: Checkout[] = []
  beforeAll(async () => {
    subject = await setup()
    scratch = await mkdtemp(join(tmpdir(), `${scratchName}-`))
  })
  afterEach(async () => {
    await Promise.all(open.splice(0).map((checkout) => checkout.release()))
  })
  afterAll(async () => {
    await subject?.cleanup()
    await rm(scratch, { recursive: true, force: true })
  })
  return {
    open,
    storage(): ObjectStore {
      if (!subject) throw new Error('storage did not start')
      return subject.storage
    },
    scratch: () => scratch,
  }
}
