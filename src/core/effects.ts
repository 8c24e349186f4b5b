/**
 * What a call may do to the world. `read` changes nothing; `write` changes the workspace;
 * `external` reaches outside the service (network); `destructive` may lose data.
 */
export const effects = ['read', 'write', 'external', 'destructive'] as const

export type Effect = (typeof effects)[number]
