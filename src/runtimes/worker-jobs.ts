import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import { isValidIdentifier } from '../core/paths'
import type { JobDispatch, JobRunner } from '../jobs/runner'
import { isRecordId } from '../storage/json-records'

/** The Queue binding's name in wrangler.toml: a producer of job messages. */
export const jobQueueBinding = 'TOOLPORT_JOBS'
/** The var naming the dead-letter queue, so the consumer knows a batch from it. */
export const deadLetterQueueVar = 'TOOLPORT_JOBS_DEAD_LETTER_QUEUE'

/** What a job message carries: the job's address; the job itself stays in the bucket. */
export interface JobMessageBody {
  toolportJob: { tenant: string; id: string }
}

/** The part of a Queue producer binding used here (workers-types' Queue). */
export interface QueueProducer {
  send(body: JobMessageBody, options?: { contentType?: 'json' }): Promise<unknown>
}

/** The parts of workers-types' Message and MessageBatch a consumer uses. */
export interface QueueMessage {
  readonly id: string
  readonly body: unknown
  /** 1 on the first delivery. */
  readonly attempts: number
  ack(): void
  retry(options?: { delaySeconds?: number }): void
}

export interface QueueBatch {
  readonly queue: string
  readonly messages: readonly QueueMessage[]
}

export function isQueueProducer(value: unknown): value is QueueProducer {
  return typeof value === 'object' && value !== null && typeof (value as QueueProducer).send === 'function'
}

/** Jobs go to the Queue: any isolate's consumer runs them, with retries and a dead-letter queue. */
export function queueDispatch(queue: QueueProducer): JobDispatch {
  return async (job) => {
    await queue.send({ toolportJob: { tenant: job.tenant, id: job.id } }, { contentType: 'json' })
  }
}

/** Without a Queue binding no isolate could run a job: submissions answer 503 instead of staying queued. */
export const noQueueDispatch: JobDispatch = async () => {
  throw new ToolError('unavailable', `Jobs need a Cloudflare Queue bound as ${jobQueueBinding}; none is bound.`, {
    hint: 'Call without ?async=true, or have the operator add the queue (infra/cloudflare/wrangler.toml) and redeploy.',
  })
}

function jobOf(body: unknown): { tenant: string; id: string } | undefined {
  const job = (body as Partial<JobMessageBody> | null)?.toolportJob
  const tenant = job?.tenant
  const id = job?.id
  if (typeof tenant !== 'string' || !isValidIdentifier(tenant) || typeof id !== 'string' || !isRecordId(id)) {
    return undefined
  }
  return { tenant, id }
}

/**
 * The consumer: each message runs its job (runStored, so a duplicate delivery runs nothing and a
 * redelivery after a dead run is the next attempt), acked once the job is stored finished. A run that
 * could not even start (storage down) is retried by the Queue; after its retries the message goes to
 * the dead-letter queue, whose batches arrive here too and store the job as failed with its webhook.
 */
export async function consumeJobBatch(
  batch: QueueBatch,
  service: { jobs: JobRunner; jobAttempts: number; deadLetterQueue: string | undefined },
  log: Logger,
): Promise<void> {
  const deadLetters = service.deadLetterQueue !== undefined && batch.queue === service.deadLetterQueue
  for (const message of batch.messages) {
    const job = jobOf(message.body)
    if (!job) {
      // A malformed message stays malformed: not retried.
      log.error('malformed job message', { queue: batch.queue })
      message.ack()
      continue
    }
    try {
      if (deadLetters) {
        const reason = new ToolError('unavailable', 'The job could not be started and its queue gave up on it.', {
          hint: 'Submit it again; the operator finds each attempt in the Worker logs.',
        })
        await service.jobs.abandon(job.tenant, job.id, reason)
      } else {
        await service.jobs.runStored(job.tenant, job.id, {
          attempt: message.attempts,
          maxAttempts: service.jobAttempts,
        })
      }
      message.ack()
    } catch (error) {
      log.warn('job message retried', {
        job: job.id,
        tenant: job.tenant,
        attempt: message.attempts,
        cause: String(error),
      })
      message.retry()
    }
  }
}
