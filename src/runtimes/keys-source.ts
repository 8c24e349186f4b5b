import { readFile } from 'node:fs/promises'
import type { ApiKey } from '../auth/keys'
import { parseKeysFile } from '../auth/keys'
import { authSettings } from '../auth/settings'
import { type Environment, loadSettings, type Runtime } from '../core/settings'
import { readSecretApiKeys } from './secret-keys'

/**
 * The keys kept outside the environment: a keys file (Node, Lambda) and an AWS secret (Lambda).
 * Reading them is runtime work, so the runtime hands them to loadConfig as fileKeys.
 */
export async function readKeySources(env: Environment, runtime: Runtime): Promise<ApiKey[]> {
  const { keysFile, keysSecret } = loadSettings(authSettings, env, runtime)
  return [
    ...(keysFile ? parseKeysFile(await readFile(keysFile, 'utf8'), `TOOLPORT_KEYS_FILE ${keysFile}`) : []),
    // Only Lambda reads a secret (its role may; a server has its own keys file).
    ...(keysSecret && runtime === 'lambda' ? await readSecretApiKeys(keysSecret, env) : []),
  ]
}
