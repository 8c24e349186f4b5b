import { ToolError } from '../core/errors'

const symlinkHint = 'Symbolic links are not followed by the storage layer.'

export function hasCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? '')
}

export function symlinkError(cause?: unknown): ToolError {
  return new ToolError('permission_denied', 'The storage path contains a symbolic link.', { hint: symlinkHint, cause })
}

export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    throw toStorageError(error)
  }
}

/**
 * Filesystem failures become ToolErrors without paths in the message (the root is server detail).
 * Anything that is not a system error, such as the caller's own body stream failing, passes through.
 */
function toStorageError(error: unknown): unknown {
  if (error instanceof ToolError || !(error instanceof Error) || !('syscall' in error)) return error
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new ToolError('unavailable', 'Storage is full.', {
        origin: 'storage',
        cause: error,
        hint: 'The storage volume is full; delete files that are no longer needed or try again later.',
      })
    case 'EACCES':
    case 'EPERM':
      return new ToolError('permission_denied', 'Storage refused access to this object.', { cause: error })
    case 'ELOOP':
      return symlinkError(error)
    case 'ENOTDIR':
    case 'EISDIR':
      return new ToolError('conflict', 'A file and a folder collide at this key.', { cause: error })
    default:
      return new ToolError('unavailable', 'Storage is unavailable.', { cause: error, origin: 'storage' })
  }
}
