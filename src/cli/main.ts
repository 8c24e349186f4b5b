#!/usr/bin/env node
// The `toolport` command (the package's bin): `toolport serve`, `toolport call TOOL` and `toolport audit TENANT`.
import { text } from 'node:stream/consumers'
import { createLocalTarget } from './local'
import { runCli } from './run'

const argv = process.argv.slice(2)
const code = await runCli(
  argv,
  {
    stdout: (chunk) => process.stdout.write(chunk),
    stderr: (chunk) => process.stderr.write(chunk),
    env: process.env,
    readStdin: () => text(process.stdin),
  },
  {
    local: createLocalTarget,
    async audit(env) {
      const [{ createAuditLog }, { loadConfig }, { createStorage }, { toolNames }, { silentLogger }] =
        await Promise.all([
          import('../audit/audit-log'),
          import('../config/config'),
          import('../runtimes/node-service'),
          import('../tools/builtins'),
          import('../core/logger'),
        ])
      const config = loadConfig(env, { toolNames })
      // Reading never prunes: retention is the service's.
      return createAuditLog({ storage: await createStorage(config.storage), log: silentLogger, retentionDays: 0 })
    },
    async serve(env) {
      // The Node runtime reads process.env and serves until a signal; --port and --host land there first.
      Object.assign(process.env, env)
      await import('../runtimes/node')
    },
  },
)
// A call leaves clients and pools open; the answer is out, so exit now. A server keeps running.
if (argv[0] !== 'serve' || code !== 0) process.exit(code)
