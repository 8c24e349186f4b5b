import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

export const approvalSettings = defineSettings({
  title: 'Approvals',
  description:
    'Calls of keys with `require_approval` in the keys file wait as pending approvals until an approver key decides (docs/contract.md).',
  variables: {
    TOOLPORT_APPROVAL_TTL_SECONDS: variable({
      schema: positiveInteger.max(604_800),
      default: '3600',
      description: 'Seconds until a pending approval expires.',
    }),
  },
  build: (values) => ({ ttlSeconds: values.TOOLPORT_APPROVAL_TTL_SECONDS }),
})

export type ApprovalSettings = SliceOf<typeof approvalSettings>
