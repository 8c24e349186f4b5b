import { describeObjectStoreContract } from './contract'
import { createMemoryStorage } from './memory'

describeObjectStoreContract('memory', async () => ({ store: createMemoryStorage() }))
