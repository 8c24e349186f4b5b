import { z } from 'zod'
import type { Effect } from '../core/effects'
import { commaList, defineSettings, httpUrl, positiveInteger, type SliceOf, variable } from '../core/settings'

// Reference 003's safety classes: a read never needs approval, so the policy names only the others.
const gatedEffect = z.enum(['write', 'external', 'destructive'])

export const approvalSettings = defineSettings({
  title: 'Approvals',
  description:
    "Calls a key's policy gates wait as pending approvals until an approver key decides (docs/contract.md#approvals). The server default is `TOOLPORT_APPROVAL`; a keys-file entry's own `require_approval` replaces it for that key, and approver keys never need approval.",
  variables: {
    TOOLPORT_APPROVAL: variable({
      schema: z
        .string()
        .optional()
        .transform((text, context) => {
          const value = (text ?? '').trim()
          if (value === '' || value === 'none') return []
          const parsed = commaList(
            gatedEffect,
            'not an effect that can need approval',
            'use write, external, destructive',
          ).safeParse(value)
          if (!parsed.success) {
            for (const issue of parsed.error.issues) context.addIssue({ code: 'custom', message: issue.message })
            return []
          }
          return [...new Set(parsed.data)] as Effect[]
        })
        .meta({ values: '`none`, `destructive`, or a comma list of `write`, `external`, `destructive`' }),
      default: 'none',
      example: 'destructive',
      description:
        "Which calls of a key need an approver's decision, by the tool's effect: `destructive` (reference 003's rule: a read never, a destructive call always), `none`, or a comma list such as `write,destructive`. Applies to every key, `TOOLPORT_API_KEYS` ones too, unless its keys-file entry sets `require_approval`; approver keys are exempt. Auth off (no keys): nothing needs approval.",
    }),
    TOOLPORT_APPROVAL_TTL_SECONDS: variable({
      schema: positiveInteger.max(604_800),
      default: '3600',
      description: 'Seconds until a pending approval expires.',
    }),
    TOOLPORT_APPROVAL_WEBHOOK_URL: variable({
      schema: httpUrl.optional(),
      description:
        'POSTed the approval card (`{ "event": "approval.created", "approval": … }`) whenever a call starts waiting for approval, signed with `X-Toolport-Signature` like job callbacks; outbound address rules apply.',
    }),
  },
  build: (values) => ({
    ttlSeconds: values.TOOLPORT_APPROVAL_TTL_SECONDS,
    /** Effects whose calls need approval for keys whose entry says nothing. */
    policy: values.TOOLPORT_APPROVAL as Effect[],
    webhookUrl: values.TOOLPORT_APPROVAL_WEBHOOK_URL,
  }),
})

export type ApprovalSettings = SliceOf<typeof approvalSettings>
