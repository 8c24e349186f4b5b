import { type ApiKey, parseApiKeys, parseKeysFile } from '../auth/keys'
import { ConfigError } from '../core/settings'

/**
 * API keys kept in AWS (TOOLPORT_API_KEYS_SECRET = the ARN of an SSM parameter or a Secrets Manager
 * secret), read once per cold start. The value is either the TOOLPORT_API_KEYS format
 * (`tenant=key,…`) or the keys-file JSON (`[{ "tenant", "key", "tools"? }]`). The SDK clients are
 * imported only here, on demand, so a deployment without a secret never loads them.
 */
export interface SecretLocation {
  service: 'ssm' | 'secretsmanager'
  region: string
  arn: string
}

const arnPattern = /^arn:(aws|aws-cn|aws-us-gov|aws-iso[a-z-]*):(ssm|secretsmanager):([a-z0-9-]+):(\d{12}):(.+)$/

export function parseSecretArn(arn: string): SecretLocation {
  const match = arnPattern.exec(arn.trim())
  const [, , service, region = '', , resource = ''] = match ?? []
  if (service === 'ssm' && resource.startsWith('parameter/')) return { service, region, arn: arn.trim() }
  if (service === 'secretsmanager' && resource.startsWith('secret:')) return { service, region, arn: arn.trim() }
  throw new ConfigError(
    'TOOLPORT_API_KEYS_SECRET: not an SSM parameter or Secrets Manager secret ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME or arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)',
  )
}

/** The keys in a secret's text: keys-file JSON when it starts with '[', otherwise `tenant=key,…`. */
export function parseSecretKeys(text: string, source: string): ApiKey[] {
  const trimmed = text.trim()
  if (trimmed.startsWith('[')) {
    // JSON.parse's own message quotes the text around the fault, which here is a key: say less.
    try {
      JSON.parse(trimmed)
    } catch {
      throw new ConfigError(`${source}: starts with "[" but is not valid JSON`)
    }
    return parseKeysFile(trimmed, source)
  }
  try {
    return parseApiKeys(trimmed)
  } catch (error) {
    throw new ConfigError((error as Error).message.replace(/^TOOLPORT_API_KEYS/, source))
  }
}

function clientConfig(location: SecretLocation, env: Record<string, string | undefined>, endpoint: string | undefined) {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN } = env
  return {
    region: location.region,
    maxAttempts: 3,
    ...(endpoint ? { endpoint } : {}),
    // The same variables the SDK's default chain reads on Lambda; explicit so `env` is the only input.
    ...(accessKeyId && secretAccessKey
      ? {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(AWS_SESSION_TOKEN ? { sessionToken: AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  }
}

async function readValue(location: SecretLocation, env: Record<string, string | undefined>): Promise<string> {
  if (location.service === 'ssm') {
    const { SSMClient, GetParameterCommand } = await import('@aws-sdk/client-ssm')
    const client = new SSMClient(clientConfig(location, env, env.AWS_ENDPOINT_URL_SSM))
    const output = await client.send(new GetParameterCommand({ Name: location.arn, WithDecryption: true }))
    return output.Parameter?.Value ?? ''
  }
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager')
  const client = new SecretsManagerClient(clientConfig(location, env, env.AWS_ENDPOINT_URL_SECRETS_MANAGER))
  const output = await client.send(new GetSecretValueCommand({ SecretId: location.arn }))
  if (output.SecretString === undefined) {
    throw new ConfigError('TOOLPORT_API_KEYS_SECRET: the secret has no string value (binary secrets are not supported)')
  }
  return output.SecretString
}

export async function readSecretApiKeys(arn: string, env: Record<string, string | undefined>): Promise<ApiKey[]> {
  const location = parseSecretArn(arn)
  let text: string
  try {
    text = await readValue(location, env)
  } catch (error) {
    if (error instanceof ConfigError) throw error
    // The error name (AccessDeniedException, ParameterNotFound, …) is what the operator acts on.
    const name = error instanceof Error ? error.name : 'Error'
    throw new ConfigError(
      `TOOLPORT_API_KEYS_SECRET: could not read ${location.arn}: ${name}: ${(error as Error).message}`,
    )
  }
  const keys = parseSecretKeys(text, `TOOLPORT_API_KEYS_SECRET ${location.arn}`)
  if (keys.length === 0) throw new ConfigError(`TOOLPORT_API_KEYS_SECRET ${location.arn}: holds no key`)
  return keys
}
