import { describeObjectStoreContract } from '../../test/support/storage-contract'
import { createMemoryStorage } from './memory'

describeObjectStoreContract('memory', async () => ({ store: createMemoryStorage() }))
