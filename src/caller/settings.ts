import { z } from 'zod'
import { defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'

/** No response passes this many characters (the references' cap); longer results are cut with a hint. */
export const maxResponseChars = 100_000

export const callSettings = defineSettings({
  title: 'Calls and limits',
  description:
    'Limits that hold for every tool call, whichever way it arrives (REST, events, MCP, jobs, approvals). Responses never pass 100,000 characters; longer results come back cut with `truncated: true`.',
  variables: {
    TOOLPORT_MAX_FILE_BYTES: variable({
      schema: positiveInteger,
      default: String(10 * 1024 * 1024),
      description:
        'Largest file a tool reads or writes; files a command writes past it are skipped with a note, and `openaiFileIdRefs` downloads are capped at it.',
    }),
    TOOLPORT_MAX_BODY_BYTES: variable({
      schema: positiveInteger.optional(),
      description:
        'Largest request body (REST and MCP). Unset: twice the largest file plus 1 MB, since JSON escaping makes a file text longer.',
    }),
    TOOLPORT_CALL_TIMEOUT_SECONDS: variable({
      schema: positiveInteger.max(86_400),
      default: '300',
      description:
        'Deadline of a synchronous call (504 `timeout`); a tool with a timeout of its own (`execute_command`) uses that instead.',
    }),
    TOOLPORT_SYNC_TIMEOUT_SECONDS: variable({
      schema: z.coerce.number().min(0).max(3600),
      default: '40',
      runtimeDefaults: { lambda: '0', workers: '0' },
      fixedOn: {
        lambda:
          'an execution environment freezes once its response is sent, so a call cannot go on as a job after a 202; use ?async=true for long calls',
        workers:
          'an isolate may stop once its response is sent, so a call cannot go on as a job after a 202; use ?async=true (a Queue runs it)',
      },
      description:
        "A synchronous REST call of a built-in still running after this many seconds turns into a job and answers 202 with a `status_url` (0: never). A source's tool runs to its source's `timeout_seconds` instead (504 past it); ?async=true makes a job of any call.",
    }),
  },
  build(values) {
    const maxFileBytes = values.TOOLPORT_MAX_FILE_BYTES
    return {
      maxFileBytes,
      // JSON escaping can grow a file's text up to six times; leave room for the largest file to arrive.
      maxBodyBytes: values.TOOLPORT_MAX_BODY_BYTES ?? Math.max(maxFileBytes * 2 + 1024 * 1024, 1024 * 1024),
      maxResponseChars,
      callTimeoutSeconds: values.TOOLPORT_CALL_TIMEOUT_SECONDS,
      syncTimeoutSeconds: values.TOOLPORT_SYNC_TIMEOUT_SECONDS,
    }
  },
})

export type CallSettings = SliceOf<typeof callSettings>
