import { ToolError } from '../core/errors'

const unavailableHeaders = { 'Retry-After': '5' }

export function copySourceMissing(): ToolError {
  return new ToolError('not_found', 'The object to copy does not exist.')
}

export function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined
}

export function statusCodeOf(error: unknown): number | undefined {
  const metadata = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata
  return metadata?.httpStatusCode
}

export function isNotFound(error: unknown): boolean {
  const name = errorName(error)
  if (name === 'NoSuchKey' || name === 'NotFound') return true
  // A missing bucket is a configuration problem, not a missing object.
  return statusCodeOf(error) === 404 && name !== 'NoSuchBucket'
}

export function unavailable(cause: unknown): ToolError {
  return new ToolError('unavailable', 'Storage is unavailable', {
    cause,
    headers: unavailableHeaders,
    origin: 'storage',
  })
}

export function toStorageError(error: unknown): unknown {
  if (error instanceof ToolError) return error
  if (errorName(error) === 'EntityTooLarge') {
    return new ToolError('size_exceeded', 'The object is too large for storage.', { cause: error })
  }
  // Network failures, 5xx, throttling and credential or permission problems alike: the operator has
  // to fix them or they pass, and the caller can only retry later.
  return unavailable(error)
}
