import { fileURLToPath } from 'node:url'
import { App } from 'aws-cdk-lib'
import { InvokeMode } from 'aws-cdk-lib/aws-lambda'
import { ToolportStack } from '../lib/toolport-stack'

// Settings come from CDK context: cdk deploy -c apiKeysSecretArn=arn:aws:ssm:… -c publicUrl=https://…
const app = new App()
const context = (name: string): string | undefined => app.node.tryGetContext(name) || undefined
const publicUrl = context('publicUrl')

new ToolportStack(app, context('stackName') ?? 'Toolport', {
  codePath: fileURLToPath(new URL('../../../dist/lambda', import.meta.url)),
  apiKeysSecretArn: context('apiKeysSecretArn'),
  invokeMode: context('invokeMode') === 'BUFFERED' ? InvokeMode.BUFFERED : InvokeMode.RESPONSE_STREAM,
  environment: publicUrl ? { TOOLPORT_PUBLIC_URL: publicUrl } : {},
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
})
