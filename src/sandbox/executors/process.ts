import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { removeTree } from '../mirror/tree'
import type { Sandbox, SandboxLimits, SandboxRunResult } from './sandbox'
import { runSandboxedChild, workspaceLimitOf } from './sandboxed-child'
import { spawnSandboxedProcess } from './sandboxed-process'

/**
 * The executor for AWS Lambda, where user namespaces are not available: every call already runs in
 * its own Firecracker micro-VM, so this adds what Lambda does not — a scrubbed environment (no AWS
 * credentials or other secrets of the service), a fresh HOME/TMPDIR removed afterwards, rlimits, and
 * the whole process group killed at the end. It does NOT hide the host filesystem: opt-in only.
 */
export function createProcessSandbox(limits: SandboxLimits, prlimitPath: string | undefined): Sandbox {
  const rlimits = `RLIMIT_FSIZE ${limits.fileBytes} bytes, RLIMIT_NOFILE ${limits.openFiles}, RLIMIT_AS ${limits.memoryBytes} bytes`
  return {
    executor: 'process',
    // No network namespace of its own: commands have the host's network, so no egress policy applies.
    egress: false,
    status: () => ({
      executor: 'process',
      status: 'ok',
      enforced: {
        isolation: 'none beyond the host (intended for AWS Lambda micro-VMs): scrubbed environment, own process group',
        network: 'not restricted',
        rlimits: prlimitPath ? rlimits : 'none: prlimit (util-linux) is not installed',
        workspace: `${limits.workspaceBytes} bytes and ${limits.workspaceEntries} entries: sampled every 250 ms, counted at any depth once the command ended; past them nothing is synced`,
      },
    }),
    // A stdio MCP server on Lambda: started for one call, in the call's scratch folder.
    async start(request) {
      if (request.mounts?.length) {
        throw new Error(
          'mounts need the bwrap or container sandbox; with the process executor, name the program by its own path',
        )
      }
      const env = {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: request.workspaceDir,
        TMPDIR: request.workspaceDir,
        LANG: 'C.UTF-8',
        ...request.env,
      }
      // No RLIMIT_AS here: servers are often Node programs, whose engine reserves more address space than
      // any sensible memory limit and then fails to start; the function's memory size bounds them on Lambda.
      const limited = prlimitPath
        ? [prlimitPath, `--nofile=${limits.openFiles}`, `--fsize=${limits.fileBytes}`, '--']
        : []
      const [file, ...args] = [...limited, ...request.argv]
      return spawnSandboxedProcess({ file: file as string, args, env, cwd: request.workspaceDir }, () => undefined)
    },
    async run(request): Promise<SandboxRunResult> {
      const scratch = await mkdtemp(join(tmpdir(), 'toolport-run-'))
      try {
        const env = {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          HOME: scratch,
          TMPDIR: scratch,
          LANG: 'C.UTF-8',
          ...request.env,
        }
        const shell = request.argv ? [...request.argv] : ['/bin/sh', '-c', request.command]
        const limited = [
          `--nofile=${limits.openFiles}`,
          `--fsize=${limits.fileBytes}`,
          `--as=${limits.memoryBytes}`,
          '--',
          ...shell,
        ]
        const [file, ...args] = prlimitPath ? [prlimitPath, ...limited] : shell
        const result = await runSandboxedChild(
          {
            file: file as string,
            args,
            env,
            cwd: request.cwd ? join(request.workspaceDir, request.cwd) : request.workspaceDir,
          },
          request,
          limits,
        )
        const { killedFor, ...rest } = result
        return { ...rest, limitExceeded: workspaceLimitOf(killedFor) }
      } finally {
        // HOME and TMPDIR of the command: it may have nested folders past PATH_MAX there too.
        await removeTree(scratch)
      }
    },
  }
}
