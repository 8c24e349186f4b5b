import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { App, Duration } from 'aws-cdk-lib'
import { Match, Template } from 'aws-cdk-lib/assertions'
import { InvokeMode } from 'aws-cdk-lib/aws-lambda'
import { ToolportStack, type ToolportStackProps } from '../lib/toolport-stack'

// The synthesized CloudFormation template, asserted: what would be deployed, without deploying.
// CDK's built-in CloudFormation schema check costs ~10 s of WebAssembly start-up per process: it runs
// once, strict, in its own test; every other synth skips it.
process.env.CDK_VALIDATION = 'false'
const codePath = mkdtempSync(join(tmpdir(), 'toolport-cdk-code-'))
writeFileSync(join(codePath, 'index.mjs'), 'export const handler = async () => ({ statusCode: 200 })\n')
const parameterArn = 'arn:aws:ssm:eu-central-1:123456789012:parameter/toolport/api-keys'

function synth(props: Partial<ToolportStackProps> = {}, context: Record<string, unknown> = {}): Template {
  const app = new App({ context })
  const stack = new ToolportStack(app, 'Test', {
    codePath,
    env: { account: '123456789012', region: 'eu-central-1' },
    ...props,
  })
  return Template.fromStack(stack)
}

type Statement = { Action: string | string[]; Resource: unknown; Effect: string }

function roleStatements(template: Template): Statement[] {
  const policies = template.findResources('AWS::IAM::Policy')
  return Object.values(policies).flatMap(
    (policy) =>
      (policy as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement,
  )
}

describe('ToolportStack', () => {
  const template = synth({ apiKeysSecretArn: parameterArn })

  it('makes an encrypted, private, TLS-only bucket that outlives the stack', () => {
    template.resourceCountIs('AWS::S3::Bucket', 1)
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' })
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    })
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    })
  })

  it('expires generated outputs (by tag), pending approvals (by prefix) and stale uploads', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: [
          {
            Id: 'expire-generated-outputs',
            Status: 'Enabled',
            ExpirationInDays: 7,
            TagFilters: [{ Key: 'toolport-lifecycle', Value: 'output' }],
          },
          { Id: 'expire-pending-approvals', Status: 'Enabled', ExpirationInDays: 2, Prefix: 'approvals/' },
          {
            Id: 'abort-incomplete-uploads',
            Status: 'Enabled',
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          },
        ],
      },
    })
  })

  it('runs Node 22 on x86_64, sized for Chromium, with the streaming handler', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['x86_64'],
      Handler: 'index.streamingHandler',
      MemorySize: 2048,
      Timeout: 900,
      EphemeralStorage: { Size: 2048 },
      Environment: {
        Variables: Match.objectLike({
          TOOLPORT_STORAGE: 's3',
          TOOLPORT_SANDBOX: 'process',
          TOOLPORT_S3_BUCKET: { Ref: Match.stringLikeRegexp('^Files') },
          TOOLPORT_API_KEYS_SECRET: parameterArn,
        }),
      },
    })
  })

  it('serves a function URL without IAM auth, in RESPONSE_STREAM mode, and outputs it with the bucket', () => {
    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', InvokeMode: 'RESPONSE_STREAM' })
    template.hasOutput('Url', {
      Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FunctionFunctionUrl'), 'FunctionUrl'] },
    })
    template.hasOutput('BucketName', { Value: { Ref: Match.stringLikeRegexp('^Files') } })
  })

  it('keeps logs for a month in the function own log group', () => {
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 })
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^Logs') } },
    })
  })

  it('gives the role only its bucket, its log group, its secret and its own function', () => {
    const statements = roleStatements(template)
    for (const statement of statements) {
      const actions = [statement.Action].flat()
      assert.ok(!actions.some((action) => action === '*' || action.endsWith(':*')), `wildcard action ${actions}`)
      assert.notEqual(statement.Resource, '*', `statement on every resource: ${actions}`)
      assert.ok(!JSON.stringify(statement.Resource).includes('"*"'), `resource wildcard in ${actions}`)
    }
    const byAction = (action: string) => statements.find((statement) => [statement.Action].flat().includes(action))
    assert.deepEqual(byAction('s3:ListBucket')?.Resource, { 'Fn::GetAtt': [bucketId(template), 'Arn'] })
    assert.match(JSON.stringify(byAction('s3:GetObject')?.Resource), /\/\*"/)
    assert.deepEqual(byAction('ssm:GetParameter')?.Resource, parameterArn)
    assert.ok(byAction('logs:PutLogEvents'))
    // No managed policies (AWSLambdaBasicExecutionRole would allow writing to any log group).
    template.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() })
    const actions = statements.flatMap((statement) => [statement.Action].flat()).sort()
    assert.deepEqual(actions, [
      'lambda:InvokeFunction',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      's3:AbortMultipartUpload',
      's3:DeleteObject',
      's3:GetObject',
      's3:ListBucket',
      's3:PutObject',
      's3:PutObjectTagging',
      'ssm:GetParameter',
    ])
  })

  it('lets the function invoke itself for jobs: its own ARN only, in a policy it does not depend on', () => {
    const functionId = logicalId(template, 'AWS::Lambda::Function')
    const roleId = logicalId(template, 'AWS::IAM::Role')
    const policies = template.findResources('AWS::IAM::Policy', {
      Properties: {
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'lambda:InvokeFunction' })]) },
      },
    })
    const entries = Object.entries(policies) as Array<
      [string, { Properties: { PolicyDocument: { Statement: Statement[] }; Roles: unknown } }]
    >
    assert.equal(entries.length, 1)
    const [policyId, policy] = entries[0] as (typeof entries)[number]
    assert.deepEqual(policy.Properties.PolicyDocument.Statement, [
      { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { 'Fn::GetAtt': [functionId, 'Arn'] } },
    ])
    assert.deepEqual(policy.Properties.Roles, [{ Ref: roleId }])
    // Template.fromStack already refuses dependency cycles; this names the one the grant must avoid.
    const fn = template.findResources('AWS::Lambda::Function')[functionId] as { DependsOn?: string[] }
    assert.ok(!(fn.DependsOn ?? []).includes(policyId), 'the function must not wait for the policy naming it')
    // Job events are trusted because only IAM principals can send them: the public may invoke the
    // function only through its URL, whose events are HTTP requests.
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')) as Array<{
      Properties: { Action: string; Principal: string; InvokedViaFunctionUrl?: boolean }
    }>
    const publicInvoke = permissions.filter(
      (permission) =>
        permission.Properties.Principal === '*' && permission.Properties.Action === 'lambda:InvokeFunction',
    )
    for (const permission of publicInvoke) assert.equal(permission.Properties.InvokedViaFunctionUrl, true)
  })

  it("configures the jobs' asynchronous invocations: bounded retries and event age, failures sent to the function itself", () => {
    const functionId = logicalId(template, 'AWS::Lambda::Function')
    template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 1)
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionId },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [functionId, 'Arn'] } } },
    })
    // The runtime reports the same bound as max_attempts.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ TOOLPORT_JOB_ATTEMPTS: '3' }) },
    })
    // Saved only once the role may invoke the destination (Lambda checks it then).
    const configs = template.findResources('AWS::Lambda::EventInvokeConfig') as Record<string, { DependsOn?: string[] }>
    const policyId = Object.keys(template.findResources('AWS::IAM::Policy')).find((id) => id.startsWith('SelfInvoke'))
    assert.ok(policyId)
    assert.ok(Object.values(configs)[0]?.DependsOn?.includes(policyId))

    const single = synth({ jobAttempts: 1, jobMaxEventAge: Duration.minutes(5) })
    single.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 300,
    })
    assert.throws(() => synth({ jobAttempts: 4 }), /jobAttempts must be 1, 2 or 3/)
  })

  it('grants a Secrets Manager secret by ARN, and the buffered handler when asked', () => {
    const partial = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:toolport/api-keys'
    const buffered = synth({ apiKeysSecretArn: partial, invokeMode: InvokeMode.BUFFERED })
    const read = roleStatements(buffered).find((statement) => statement.Action === 'secretsmanager:GetSecretValue')
    assert.equal(read?.Resource, `${partial}-??????`)
    buffered.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.handler' })
    buffered.hasResourceProperties('AWS::Lambda::Url', { InvokeMode: 'BUFFERED' })
    const withoutSecret = roleStatements(synth())
    assert.ok(!withoutSecret.some((statement) => JSON.stringify(statement.Action).match(/ssm|secretsmanager/)))
  })

  it('passes CloudFormation schema validation (errors fail the synth)', () => {
    delete process.env.CDK_VALIDATION
    try {
      synth({ apiKeysSecretArn: parameterArn }, { '@aws-cdk/core:validateAgainstDefaultRules': true })
    } finally {
      process.env.CDK_VALIDATION = 'false'
    }
  })
})

function logicalId(template: Template, type: string): string {
  const ids = Object.keys(template.findResources(type))
  assert.equal(ids.length, 1, `one ${type}`)
  return ids[0] as string
}

function bucketId(template: Template): string {
  const [id] = Object.keys(template.findResources('AWS::S3::Bucket'))
  assert.ok(id)
  return id
}
