import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { defineTool } from '../tool'

export const systemInfo = defineTool({
  name: 'system_info',
  title: 'System information',
  description:
    'Describe the machine the tools run on: operating system, CPU count, memory, storage, runtime, and whether the shell sandbox and web access are available.',
  effect: 'read',
  uses: ['system', 'shell', 'http', 'search'],
  input: z.strictObject({}),
  output: z.object({
    os: z.string(),
    os_version: z.string(),
    arch: z.string(),
    hostname: z.string(),
    available_processors: z.number().int(),
    total_memory_bytes: z.number(),
    free_memory_bytes: z.number(),
    total_storage_bytes: z.number().nullable(),
    free_storage_bytes: z.number().nullable(),
    runtime: z.enum(['node', 'lambda', 'workers']),
    runtime_version: z.string(),
    sandbox: z.object({ available: z.boolean(), executor: z.string().optional() }),
    web: z.object({ fetch: z.boolean(), search: z.string().nullable() }),
  }),
  async run(_input, { system, shell, http, search }) {
    if (!system) {
      throw new ToolError('unavailable', 'This runtime does not report system information.', {
        hint: 'system_info is not supported on this deployment.',
      })
    }
    const info = await system()
    const sandbox = shell?.status()
    return {
      ...info,
      sandbox: { available: shell !== undefined, ...(sandbox ? { executor: sandbox.executor } : {}) },
      web: { fetch: http !== undefined, search: search?.name ?? null },
    }
  },
})

export const getEnv = defineTool({
  name: 'get_env',
  title: 'Read environment variable',
  description: 'Read one environment variable of the service, among those the operator allowed (TOOLPORT_ENV_ALLOW).',
  effect: 'read',
  uses: ['environment'],
  input: z.strictObject({ name: z.string().min(1).max(128).describe('Variable name, e.g. "REGION".') }),
  callTitle: (input) => `Read variable ${input.name}`,
  output: z.object({ name: z.string(), value: z.string() }),
  async run(input, { environment }) {
    const allowed = Object.keys(environment).sort()
    if (!Object.hasOwn(environment, input.name)) {
      throw new ToolError('permission_denied', `The variable ${JSON.stringify(input.name)} may not be read.`, {
        hint:
          allowed.length > 0
            ? `Readable variables: ${allowed.join(', ')}.`
            : 'No variables are readable on this server.',
        details: { field: 'name' },
      })
    }
    const value = environment[input.name]
    if (value === undefined) {
      throw new ToolError('not_found', `The variable ${input.name} is not set.`, {
        hint: 'It is allowed but has no value on this server.',
        details: { field: 'name' },
      })
    }
    return { name: input.name, value }
  },
})
