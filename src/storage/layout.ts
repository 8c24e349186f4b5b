/**
 * The storage key layout: every prefix toolport writes in its bucket is named here and nowhere else, so
 * a new kind of object cannot land where file tools, a listing or the bucket's lifecycle rules do not
 * expect it. docs/storage.md's "what is stored where" table is generated from `storageLayout`
 * (`npm run docs:storage`; a test checks it is current).
 */
export interface LayoutEntry {
  /** The key pattern, {placeholders} for the variable parts. */
  pattern: string
  what: string
  /** What writes it and how (compare-and-swap, create-if-absent, plain). */
  writes: string
}

export const workspaceKeys = {
  /** Everything a tenant stores as files: what the storage quota counts. */
  tenantRoot: (tenant: string) => `tenants/${tenant}/workspaces/`,
  root: (tenant: string, workspace: string) => `tenants/${tenant}/workspaces/${workspace}/`,
}

export const tenantKeys = {
  /** Every tenant's prefix sits below this one (tenants/{tenant}/). */
  all: 'tenants/',
  /** The tenant's stored bytes, kept by compare-and-swap (workspace/quota.ts). */
  usage: (tenant: string) => `tenants/${tenant}/usage.json`,
}

export const jobKeys = {
  /** Relative to a tenant's prefix (tenants/{tenant}/), for the sweep over every tenant. */
  folder: 'jobs/',
  record: (tenant: string, id: string) => `tenants/${tenant}/jobs/${id}.json`,
}

export const approvalKeys = {
  folder: (tenant: string) => `approvals/${tenant}/`,
  record: (tenant: string, id: string) => `approvals/${tenant}/${id}.json`,
}

export const sourceKeys = {
  operator: 'sources/operator/',
  tenant: (tenant: string) => `sources/tenants/${tenant}/`,
  /** The tenant's source budget: each source's tools, reserved before its manifest is stored. */
  budget: (tenant: string) => `sources/budgets/${tenant}.json`,
}

export const markerKeys = {
  /** The change markers of one workspace, its prefix below sync-markers/. */
  folder: (workspacePrefix: string) => `sync-markers/${workspacePrefix}`,
}

export const oauthKeys = {
  /** The built-in authorization server's signing keys, created once by whichever instance starts first. */
  signingKeys: 'oauth/keys.json',
  /** One record of oidc-provider's (a session, a code, a token, a client), by model and a digest of its id. */
  record: (model: string, digest: string) => `oauth/${model}/${digest}.json`,
  /** Which records belong to a grant, so that revoking it finds them all. */
  grantFolder: (grantDigest: string) => `oauth/grants/${grantDigest}/`,
  grantMember: (grantDigest: string, model: string, digest: string) => `oauth/grants/${grantDigest}/${model}.${digest}`,
}

export const mcpSessionKeys = {
  /** One MCP session of a 2025 client: who holds it and the resources it subscribed to. */
  record: (tenant: string, id: string) => `mcp-sessions/${tenant}/${id}.json`,
}

export const auditKeys = {
  /** Every tenant's chain sits below this one (audit/{tenant}/). */
  all: 'audit/',
  folder: (tenant: string) => `audit/${tenant}/`,
  /** One event, by its place in the tenant's chain: zero-padded, so keys sort as the chain runs. */
  record: (tenant: string, seq: number) => `audit/${tenant}/${String(seq).padStart(12, '0')}.json`,
  /** Where the chain ended when last written: a hint for appenders, and what verification checks the end against. */
  head: (tenant: string) => `audit/${tenant}/head.json`,
}

export const usageKeys = {
  /** One instance's counts of a tenant's day, written only by that instance (no two writers). */
  day: (tenant: string, day: string) => `usage/${tenant}/${day}/`,
  instance: (tenant: string, day: string, instance: string) => `usage/${tenant}/${day}/${instance}.json`,
}

export const storageLayout: readonly LayoutEntry[] = [
  {
    pattern: 'tenants/{tenant}/workspaces/{workspace}/{path}',
    what: "workspace files ([contract.md](contract.md#workspaces-and-paths)); generated files under the workspace's `outputs/`",
    writes:
      'file tools by compare-and-swap on the etag read; the sandbox sync-back with If-Match on the etag checked out',
  },
  {
    pattern: 'tenants/{tenant}/usage.json',
    what: 'bytes the tenant stores, against `TOOLPORT_TENANT_QUOTA_BYTES` ([operations.md](operations.md#quota-and-deadline))',
    writes: 'compare-and-swap, before each write that grows the tenant (a reservation) and after each that shrinks it',
  },
  {
    pattern: 'tenants/{tenant}/jobs/{id}.json',
    what: 'job records ([contract.md](contract.md#long-calls-jobs))',
    writes: 'created if absent, then compare-and-swap (a heartbeat is one conditional put)',
  },
  {
    pattern: 'approvals/{tenant}/{id}.json',
    what: 'calls waiting for approval ([contract.md](contract.md#approvals-and-dry-runs))',
    writes: 'created if absent; a decision marks it taken by compare-and-swap, then deletes it (exactly once)',
  },
  {
    pattern: 'sources/operator/{id}.json',
    what: "the operator's source manifests in storage, also as `{id}.yaml` ([sources.md](sources.md))",
    writes: 'by the operator (any tool that writes the bucket); toolport only reads them',
  },
  {
    pattern: 'sources/tenants/{tenant}/{id}.json',
    what: "a tenant's sources (`PUT /v1/sources/{id}`, [sources.md](sources.md))",
    writes:
      'compare-and-swap on the version the instance loaded: a PUT or DELETE another instance landed meanwhile is 409',
  },
  {
    pattern: 'sources/budgets/{tenant}.json',
    what: "a tenant's source budget: the tools of each of its sources, against `TOOLPORT_TENANT_SOURCES_MAX` and `TOOLPORT_TENANT_SOURCE_TOOLS_MAX` ([sources.md](sources.md#limits-and-safety))",
    writes: 'compare-and-swap: a PUT reserves before it stores the manifest, a DELETE releases',
  },
  {
    pattern: 'sync-markers/tenants/{tenant}/workspaces/{workspace}/{reader}',
    what: 'change markers: one per instance keeping a sandbox copy of the workspace ([sandbox.md](sandbox.md#the-workspace-travels))',
    writes: 'put by their reader before it lists; deleted by every writer of the workspace',
  },
  {
    pattern: 'oauth/keys.json',
    what: "the built-in authorization server's signing keys ([auth.md](auth.md))",
    writes: 'created if absent by the first instance that needs them; read by every other',
  },
  {
    pattern: 'oauth/{model}/{digest}.json',
    what: 'its sessions, interactions, codes, tokens, grants and registered clients, by a digest of their id; each carries its expiry',
    writes:
      'put; a code or refresh token is consumed by compare-and-swap (exactly once); expired ones are deleted when read',
  },
  {
    pattern: 'oauth/grants/{grant}/{model}.{digest}',
    what: 'which codes and tokens a grant issued, so revoking the grant (or a reused refresh token) revokes them all',
    writes: 'created with each record; deleted with the grant',
  },
  {
    pattern: 'mcp-sessions/{tenant}/{id}.json',
    what: 'an MCP session of a 2025 client (`Mcp-Session-Id`): its key, expiry and the resources it subscribed to, with the version of each it was last told of ([platforms.md](platforms.md#an-mcp-client))',
    writes:
      'created if absent at initialize; compare-and-swap by subscribe, unsubscribe and the stream that tells of a change (once per change, on whichever instance); deleted by DELETE /mcp. A lifecycle rule may expire the prefix after a day',
  },
  {
    pattern: 'audit/{tenant}/{seq}.json',
    what: "the tenant's audit log: one event each, carrying the hash of the one before ([operations.md](operations.md#audit-log)); `_service` holds refusals of keys that name no tenant",
    writes:
      'created if absent (the key is the place in the chain: of two instances one gets it, the other takes the next); deleted only by retention',
  },
  {
    pattern: 'audit/{tenant}/head.json',
    what: 'where the chain ended when last written (seq and hash)',
    writes: 'compare-and-swap, only ever forward',
  },
  {
    pattern: 'usage/{tenant}/{day}/{instance}.json',
    what: "one instance's usage counts of a tenant's day ([operations.md](operations.md#usage)); `GET /v1/usage` sums every instance's",
    writes: 'put by that instance alone, every few seconds while it counts',
  },
  {
    pattern: '.toolport-tmp/…',
    what: "the fs driver's temporary files, renamed into place (never a key of the other drivers)",
    writes: 'fs driver only',
  },
]

/** The Markdown table of docs/storage.md. */
export function layoutTable(): string {
  const rows = storageLayout.map((entry) => [`\`${entry.pattern}\``, entry.what, entry.writes])
  const header = ['key', 'what', 'written']
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)))
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

const tableStart = /<!-- layout:start[^>]*-->\n/
const tableEnd = '<!-- layout:end -->'

/** The document with the table between its layout markers replaced by layoutTable(). */
export function withLayoutTable(document: string): string {
  const start = tableStart.exec(document)
  const end = document.indexOf(tableEnd)
  if (!start || end < start.index) throw new Error('docs/storage.md has no layout markers')
  const from = start.index + start[0].length
  return `${document.slice(0, from)}${layoutTable()}\n${document.slice(end)}`
}
