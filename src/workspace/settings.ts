import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

export const workspaceSettings = defineSettings({
  title: 'Workspaces',
  variables: {
    TOOLPORT_TENANT_QUOTA_BYTES: variable({
      schema: positiveInteger.optional(),
      description:
        'Bytes each tenant may store across its workspaces; a write past it answers 413 `size_exceeded`. Usage is cached per tenant for 10 s per instance, so with several instances the quota is approximate. Unset: unlimited.',
    }),
  },
  build: (values) => ({ tenantQuotaBytes: values.TOOLPORT_TENANT_QUOTA_BYTES }),
})

export type WorkspaceSettings = SliceOf<typeof workspaceSettings>
