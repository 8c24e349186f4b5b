import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

export const workspaceSettings = defineSettings({
  title: 'Workspaces',
  variables: {
    TOOLPORT_TENANT_QUOTA_BYTES: variable({
      schema: positiveInteger.optional(),
      description:
        'Bytes each tenant may store across its workspaces; a write past it answers 413 `size_exceeded`. Usage is one record per tenant in the bucket, reserved by compare-and-swap before each write, so it holds across every instance (to within one file in flight). Unset: unlimited.',
    }),
  },
  build: (values) => ({ tenantQuotaBytes: values.TOOLPORT_TENANT_QUOTA_BYTES }),
})

export type WorkspaceSettings = SliceOf<typeof workspaceSettings>
