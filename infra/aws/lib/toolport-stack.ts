import { CfnOutput, Duration, RemovalPolicy, Size, Stack, type StackProps } from 'aws-cdk-lib'
import * as iam from 'aws-cdk-lib/aws-iam'
import * as lambda from 'aws-cdk-lib/aws-lambda'
import * as logs from 'aws-cdk-lib/aws-logs'
import * as s3 from 'aws-cdk-lib/aws-s3'
import type { Construct } from 'constructs'

/**
 * toolport on AWS: one Lambda function behind a function URL, all state in one S3 bucket. The role
 * reaches that bucket, its own log group, (optionally) the API keys secret, and the function itself
 * (asynchronous jobs) — nothing else.
 */
export interface ToolportStackProps extends StackProps {
  /** Folder with the built bundle (npm run build writes dist/lambda). */
  codePath: string
  /** ARN of an SSM parameter or Secrets Manager secret holding the API keys (TOOLPORT_API_KEYS_SECRET). */
  apiKeysSecretArn?: string
  /** RESPONSE_STREAM (default): event streams and bodies over 6 MB. BUFFERED: one JSON answer per call. */
  invokeMode?: lambda.InvokeMode
  /** Sized for headless Chromium: it wants ~1.5 GB and extracts ~200 MB to /tmp. */
  memorySize?: number
  timeout?: Duration
  logRetention?: logs.RetentionDays
  /** Days generated files (tagged toolport-lifecycle=output) are kept. */
  outputExpirationDays?: number
  /** Days objects under approvals/ (pending approvals) are kept. */
  approvalExpirationDays?: number
  /**
   * Runs a job may have (1 to 3): Lambda retries a job's asynchronous event this less one times when
   * its invocation fails (throws, times out, or its process dies). Default 3, Lambda's most.
   */
  jobAttempts?: number
  /** How long a job's event may wait in Lambda's queue (throttled) before it is given up; default 1 h. */
  jobMaxEventAge?: Duration
  /** Further settings for the function (TOOLPORT_PUBLIC_URL, TOOLPORT_TOOLS, …). */
  environment?: Record<string, string>
}

/** Tag the service puts on files it generates; the lifecycle rule below expires them. */
export const outputTag = { key: 'toolport-lifecycle', value: 'output' }
export const approvalsPrefix = 'approvals/'

export class ToolportStack extends Stack {
  readonly bucket: s3.Bucket
  readonly function: lambda.Function
  readonly url: lambda.FunctionUrl
  /** lambda:InvokeFunction on the function, for its role: how jobs start. */
  readonly selfInvokePolicy: iam.Policy
  /** Retries, event age and on-failure destination of the jobs' asynchronous invocations. */
  readonly jobInvokeConfig: lambda.EventInvokeConfig

  constructor(scope: Construct, id: string, props: ToolportStackProps) {
    super(scope, id, props)
    const invokeMode = props.invokeMode ?? lambda.InvokeMode.RESPONSE_STREAM
    const jobAttempts = props.jobAttempts ?? 3
    if (!Number.isInteger(jobAttempts) || jobAttempts < 1 || jobAttempts > 3) {
      throw new Error(
        `jobAttempts must be 1, 2 or 3 (Lambda retries an asynchronous event at most twice), not ${jobAttempts}`,
      )
    }

    this.bucket = new s3.Bucket(this, 'Files', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      // Workspaces are user data: deleting the stack must not delete them.
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: 'expire-generated-outputs',
          // Outputs live under tenants/*/workspaces/*/outputs/; a lifecycle prefix cannot hold
          // wildcards, so the rule matches the tag instead of the path.
          tagFilters: { [outputTag.key]: outputTag.value },
          expiration: Duration.days(props.outputExpirationDays ?? 7),
        },
        {
          id: 'expire-pending-approvals',
          prefix: approvalsPrefix,
          expiration: Duration.days(props.approvalExpirationDays ?? 2),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    })

    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    })

    // A role of our own instead of AWSLambdaBasicExecutionRole, which may write to every log group.
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'toolport: its bucket, its log group, its API keys secret',
    })
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    )
    role.addToPolicy(
      new iam.PolicyStatement({
        // HeadBucket (readiness) and ListObjectsV2 need ListBucket on the bucket itself.
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
      }),
    )
    role.addToPolicy(
      new iam.PolicyStatement({
        // Put/Get/Delete/Copy, multipart uploads (Upload from lib-storage), tags for the lifecycle.
        actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:PutObjectTagging', 's3:AbortMultipartUpload'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    )
    if (props.apiKeysSecretArn) role.addToPolicy(secretReadStatement(props.apiKeysSecretArn))

    this.function = new lambda.Function(this, 'Function', {
      description: 'toolport: tool-execution HTTP service',
      runtime: lambda.Runtime.NODEJS_22_X,
      // @sparticuz/chromium ships an x86-64 binary only.
      architecture: lambda.Architecture.X86_64,
      handler: invokeMode === lambda.InvokeMode.RESPONSE_STREAM ? 'index.streamingHandler' : 'index.handler',
      code: lambda.Code.fromAsset(props.codePath),
      memorySize: props.memorySize ?? 2048,
      timeout: props.timeout ?? Duration.seconds(900),
      // Chromium's extraction (~200 MB) plus workspace copies for execute_command.
      ephemeralStorageSize: Size.gibibytes(2),
      role,
      logGroup,
      environment: {
        TOOLPORT_STORAGE: 's3',
        TOOLPORT_S3_BUCKET: this.bucket.bucketName,
        TOOLPORT_SANDBOX: 'process',
        TOOLPORT_JOB_ATTEMPTS: String(jobAttempts),
        ...(props.apiKeysSecretArn ? { TOOLPORT_API_KEYS_SECRET: props.apiKeysSecretArn } : {}),
        ...props.environment,
      },
    })

    // A job (?async=true) runs in an asynchronous invocation of the function itself (InvocationType
    // Event, see src/runtimes/lambda.ts), so it gets its own execution environment and full timeout.
    // The statement lives in a policy of its own: the function depends on the role's default policy
    // (its first call already needs logs and bucket), so naming the function there would be a cycle.
    this.selfInvokePolicy = new iam.Policy(this, 'SelfInvoke', {
      roles: [role],
      statements: [
        new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.function.functionArn] }),
      ],
    })

    // AWS retries a failed asynchronous event (twice by default), may deliver one twice, and drops one
    // that waited too long. So: retries bounded by jobAttempts (a retry after a dead run is the job's
    // next attempt; a duplicate runs nothing, the job record is claimed by compare-and-swap), a bounded
    // event age, and the function itself as the on-failure destination: Lambda then sends it an
    // invocation record, and the job is stored as failed with the reason and its webhook sent, instead
    // of staying queued until its TTL. The destination is bound by ARN: CDK's LambdaDestination would
    // grant the invoke on the role's default policy, the cycle the SelfInvoke policy avoids.
    const self: lambda.IDestination = { bind: () => ({ destination: this.function.functionArn }) }
    this.jobInvokeConfig = new lambda.EventInvokeConfig(this, 'JobInvokeConfig', {
      function: this.function,
      retryAttempts: jobAttempts - 1,
      maxEventAge: props.jobMaxEventAge ?? Duration.hours(1),
      onFailure: self,
    })
    // Lambda checks the role may invoke the destination when the config is saved.
    this.jobInvokeConfig.node.addDependency(this.selfInvokePolicy)

    // toolport checks bearer keys itself (tenants, tool scopes); IAM auth would shut out LLM platforms.
    this.url = this.function.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE, invokeMode })

    new CfnOutput(this, 'Url', { value: this.url.url, description: 'toolport base URL' })
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName, description: 'bucket holding all workspaces' })
  }
}

/** Read access to exactly the API keys secret (SSM parameter or Secrets Manager secret). */
export function secretReadStatement(arn: string): iam.PolicyStatement {
  const [, , service = ''] = arn.split(':')
  if (service === 'ssm') return new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: [arn] })
  if (service === 'secretsmanager') {
    // A complete secret ARN ends in -XXXXXX (six random characters); a partial one needs them matched.
    const complete = /-[A-Za-z0-9]{6}$/.test(arn)
    return new iam.PolicyStatement({
      actions: ['secretsmanager:GetSecretValue'],
      resources: [complete ? arn : `${arn}-??????`],
    })
  }
  throw new Error(`apiKeysSecretArn must be an SSM parameter or Secrets Manager secret ARN, not ${arn}`)
}
