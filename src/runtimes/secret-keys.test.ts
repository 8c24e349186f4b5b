import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../../test/support/local-web'
import { parseSecretArn, parseSecretKeys, readSecretApiKeys } from './secret-keys'

// A local stand-in for the SSM and Secrets Manager JSON APIs: the real SDK clients talk to it.
const parameterArn = 'arn:aws:ssm:eu-central-1:123456789012:parameter/toolport/api-keys'
const secretArn = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:toolport/api-keys-AbCdEf'
const keysJson = JSON.stringify([{ tenant: 'acme', key: 'acme-key-0123456789', tools: ['read_file'] }])
let web: LocalWeb
const values = new Map<string, string>()

beforeAll(async () => {
  web = await startLocalWeb({
    '/': (request, response, body) => {
      const target = String(request.headers['x-amz-target'])
      const input = JSON.parse(body)
      const id = input.Name ?? input.SecretId
      const value = values.get(id)
      response.setHeader('content-type', 'application/x-amz-json-1.1')
      if (value === undefined) {
        const type = target.startsWith('AmazonSSM') ? 'ParameterNotFound' : 'ResourceNotFoundException'
        response.statusCode = 400
        response.end(JSON.stringify({ __type: type, message: `nothing at ${id}` }))
      } else if (target === 'AmazonSSM.GetParameter') {
        expect(input.WithDecryption).toBe(true)
        response.end(JSON.stringify({ Parameter: { Name: id, Type: 'SecureString', Value: value, Version: 1 } }))
      } else {
        response.end(JSON.stringify({ ARN: id, Name: 'toolport/api-keys', SecretString: value }))
      }
    },
  })
})

afterAll(async () => {
  await web.stop()
})

const env = () => ({
  AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'secret-example',
  AWS_ENDPOINT_URL_SSM: web.url,
  AWS_ENDPOINT_URL_SECRETS_MANAGER: web.url,
})

describe('API keys from AWS', () => {
  it('tells SSM parameters from Secrets Manager secrets by ARN and takes the region from it', () => {
    expect(parseSecretArn(parameterArn)).toEqual({ service: 'ssm', region: 'eu-central-1', arn: parameterArn })
    expect(parseSecretArn(secretArn)).toMatchObject({ service: 'secretsmanager', region: 'eu-central-1' })
    for (const bad of [
      'toolport/api-keys',
      'arn:aws:s3:::bucket',
      'arn:aws:ssm:eu-central-1:123456789012:document/x',
    ]) {
      expect(() => parseSecretArn(bad), bad).toThrow(/not an SSM parameter or Secrets Manager secret ARN/)
    }
  })

  it('accepts both the TOOLPORT_API_KEYS format and the keys-file JSON', () => {
    expect(parseSecretKeys('a=key-a-0123456789abcdef, key-b-0123456789abcdef', 'S')).toEqual([
      { tenant: 'a', key: 'key-a-0123456789abcdef' },
      { tenant: 'default', key: 'key-b-0123456789abcdef' },
    ])
    expect(parseSecretKeys(` ${keysJson}\n`, 'S')).toEqual(JSON.parse(keysJson))
    expect(() => parseSecretKeys('a=short', 'SOURCE')).toThrow(/^SOURCE: /)
    // The parser's own message would quote the text, which is a key.
    expect(() => parseSecretKeys('[{"key": "half-a-secret-key', 'S')).toThrow(
      'S: starts with "[" but is not valid JSON',
    )
  })

  it('reads an SSM SecureString parameter', async () => {
    values.set(parameterArn, 'acme=acme-key-0123456789')
    expect(await readSecretApiKeys(parameterArn, env())).toEqual([{ tenant: 'acme', key: 'acme-key-0123456789' }])
  })

  it('reads a Secrets Manager secret string', async () => {
    values.set(secretArn, keysJson)
    expect(await readSecretApiKeys(secretArn, env())).toEqual(JSON.parse(keysJson))
  })

  it('names the AWS error when the secret cannot be read, and refuses an empty one', async () => {
    const missing = 'arn:aws:ssm:eu-central-1:123456789012:parameter/nope'
    await expect(readSecretApiKeys(missing, env())).rejects.toThrow(
      /could not read .*parameter\/nope: ParameterNotFound/,
    )
    values.set(secretArn, ' ')
    await expect(readSecretApiKeys(secretArn, env())).rejects.toThrow(/holds no key/)
  })
})
