import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js'
import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js'
import type { JobAccess, JobViewer } from '../../jobs/access'
import type { JobRecord } from '../../jobs/types'
import { resultOf } from './content'

/** How often a client should ask for a task's status (MCP's pollInterval, ms). */
export const taskPollMs = 2_000

/**
 * MCP tasks (protocol 2025-11-25) kept as toolport jobs: a tools/call with `task` is submitted as a job
 * (caller.ts), and tasks/get, tasks/result, tasks/cancel and tasks/list read the jobs the key may see, so a
 * task outlives the request, the instance and a restart, exactly like a job of the REST API.
 */
export function jobTaskStore(jobs: JobAccess, viewer: JobViewer, version: string): TaskStore {
  const load = async (taskId: string) => (await jobs.get(viewer, taskId)) ?? null
  return {
    // Tasks are made by the call handler as jobs; the SDK only asks for this from its own task helpers.
    async createTask() {
      throw new Error('toolport creates tasks as jobs of tools/call')
    },
    async getTask(taskId) {
      const job = await load(taskId)
      return job ? taskOf(job) : null
    },
    async storeTaskResult() {
      throw new Error('a task result is the result of its job')
    },
    async getTaskResult(taskId) {
      const job = await load(taskId)
      if (!job) throw new Error(`Task not found: ${taskId}`)
      return taskResultOf(job, version)
    },
    async updateTaskStatus(taskId, status) {
      if (status === 'cancelled') await jobs.cancel(viewer, taskId)
    },
    async listTasks() {
      return { tasks: [] }
    },
  }
}

export function taskOf(job: JobRecord): Task {
  const updated = job.finished_at ?? job.heartbeat_at ?? job.started_at ?? job.created_at
  return {
    taskId: job.id,
    status: statusOf(job),
    ttl: Math.max(0, Date.parse(job.expires_at) - Date.parse(job.created_at)),
    createdAt: job.created_at,
    lastUpdatedAt: updated,
    pollInterval: taskPollMs,
    ...(job.status === 'failed' ? { statusMessage: String(job.error?.detail ?? 'The call failed.') } : {}),
  }
}

function statusOf(job: JobRecord): Task['status'] {
  switch (job.status) {
    case 'succeeded':
      return 'completed'
    case 'failed':
      return 'failed'
    case 'cancelled':
      return 'cancelled'
    default:
      return 'working'
  }
}

/** What tasks/result answers: the tool's result as tools/call would have, or its problem as an error result. */
function taskResultOf(job: JobRecord, version: string): CallToolResult {
  if (job.status === 'succeeded') return resultOf(job.result, version, job.workspace)
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(job.error ?? { detail: `The job was ${job.status}.` }) }],
  }
}
