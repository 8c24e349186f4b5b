// Tests of infra/aws (the CDK app). It has its own package.json so the service never carries the
// CDK; its packages are installed here on first use (npm ci, ~10-20 s), then typechecked and tested.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const folder = fileURLToPath(new URL('../infra/aws/', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function run(command, args, cwd = folder) {
  const started = Date.now()
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' })
  if (result.status !== 0) {
    console.error(`infra/aws: ${command} ${args.join(' ')} failed`)
    process.exit(result.status ?? 1)
  }
  console.log(`infra/aws: ${command} ${args.join(' ')} took ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

if (!existsSync(new URL('node_modules/aws-cdk-lib/package.json', `file://${folder}`))) {
  run(npm, ['ci', '--no-audit', '--no-fund'])
}
run(process.execPath, [
  fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)),
  '-p',
  'tsconfig.json',
])
run(npm, ['test'])
