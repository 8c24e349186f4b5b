#!/usr/bin/env node
// The `toolport` command (the package's bin): `toolport serve` and `toolport call TOOL`.
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
    async serve(env) {
      // The Node runtime reads process.env and serves until a signal; --port and --host land there first.
      Object.assign(process.env, env)
      await import('../runtimes/node')
    },
  },
)
// A call leaves clients and pools open; the answer is out, so exit now. A server keeps running.
if (argv[0] !== 'serve' || code !== 0) process.exit(code)
