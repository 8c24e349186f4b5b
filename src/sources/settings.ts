import { z } from 'zod'
import { commaList, defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'
import { type CompatPackName, compatPackNames } from './compat/packs'
import { type TenantSourceKind, tenantSourceKinds } from './manifest'

export const sourceSettings = defineSettings({
  title: 'Tools and sources',
  description:
    "The catalog is the built-in tools plus the tools of sources: manifests the operator puts in a folder or in storage (`sources/operator/`), compat packs, and each tenant's own (`PUT /v1/sources/{id}` with an admin key). Changes apply without a restart (docs/sources.md).",
  variables: {
    TOOLPORT_TOOLS: variable({
      schema: commaList(z.string(), 'not a tool name', 'use names from GET /v1/tools'),
      description:
        'Comma list of the built-in tools to enable; unset: all. An unknown name stops the service at start.',
    }),
    TOOLPORT_SOURCES_DIR: variable({
      schema: z.string().min(1).optional(),
      description:
        'Node: a folder of operator source manifests (`{id}.json` or `.yaml`), watched for changes; each file is one source.',
    }),
    TOOLPORT_SOURCES_REFRESH_SECONDS: variable({
      schema: positiveInteger.max(3600),
      default: '10',
      description:
        'How soon this instance sees sources that another instance (or a writer of the bucket) added, changed or removed; changes made through this instance apply at once.',
    }),
    TOOLPORT_SOURCES_UPSTREAM_REFRESH_SECONDS: variable({
      schema: positiveInteger.max(86_400),
      default: '300',
      description:
        "How often a source whose tools come from its upstream (an MCP server, an OpenAPI document at a URL) lists them again; an MCP server's tools/list_changed refreshes at once.",
    }),
    TOOLPORT_TENANT_SOURCE_KINDS: variable({
      schema: commaList(z.enum(tenantSourceKinds), 'not a source kind', `use ${tenantSourceKinds.join(', ')}`),
      default: 'http,mcp,openapi,alias',
      // The MCP client compiles schemas with eval, which Workers forbid.
      runtimeDefaults: { workers: 'http,openapi,alias' },
      description:
        'Kinds of source tenants may register. `command` and `mcp-stdio` (an MCP server started from a command) run programs in the sandbox and are off unless listed.',
    }),
    TOOLPORT_TENANT_SOURCES_MAX: variable({
      schema: positiveInteger.max(10_000),
      default: '50',
      description: 'Sources one tenant may register.',
    }),
    TOOLPORT_TENANT_SOURCE_TOOLS_MAX: variable({
      schema: positiveInteger.max(1_000_000),
      default: '2000',
      description:
        "Tools one tenant's sources may hold together. Each loaded tool keeps its compiled schemas in memory (up to ~0.2 MB for a wide schema), so this bounds what one tenant admin can make the service hold.",
    }),
    TOOLPORT_COMPAT_PACKS: variable({
      schema: commaList(z.enum(compatPackNames), 'not a compat pack', `use ${compatPackNames.join(', ')}`),
      example: 'boris,bond',
      description:
        'Comma list of compat packs: the tool and field names of a reference system, accepted as they are (`boris`: camelCase fields such as outputPath; `bond`: shell, file_read, file_write, env; `fengyu`: filePath). docs/sources.md lists each.',
    }),
  },
  build(values, { env }) {
    return {
      // Unset means every tool; set but naming none (" , ") is refused when the config checks the names.
      enabled: env.TOOLPORT_TOOLS ? values.TOOLPORT_TOOLS : undefined,
      sourcesDir: values.TOOLPORT_SOURCES_DIR,
      refreshMs: values.TOOLPORT_SOURCES_REFRESH_SECONDS * 1000,
      upstreamRefreshMs: values.TOOLPORT_SOURCES_UPSTREAM_REFRESH_SECONDS * 1000,
      // commaList keeps only entries its item schema (the enums above) accepted.
      tenantKinds: values.TOOLPORT_TENANT_SOURCE_KINDS as TenantSourceKind[],
      maxTenantSources: values.TOOLPORT_TENANT_SOURCES_MAX,
      maxTenantSourceTools: values.TOOLPORT_TENANT_SOURCE_TOOLS_MAX,
      compatPacks: values.TOOLPORT_COMPAT_PACKS as CompatPackName[],
    }
  },
})

export type RegistrySettings = SliceOf<typeof sourceSettings>
