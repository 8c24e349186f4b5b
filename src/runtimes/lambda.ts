import { createLambdaApp, createLambdaHandler, createStreamingHandler, type StreamingHandler } from './lambda-service'

/**
 * The AWS Lambda entry point. The app is module state on purpose: Lambda reuses an execution
 * environment for many invocations, one at a time, so whatever the module builds during the init
 * phase (config, secrets, S3 client, sandbox probe) is paid for once per cold start, not per call.
 * Everything per request still lives in the request; nothing here is mutable request state.
 *
 * Both handlers also take the function's own job events ({ toolportJob: { tenant, id } }): a job
 * submitted with ?async=true is saved as queued and handed to an asynchronous invocation of this
 * function (InvocationType Event), which runs it to completion in its own execution environment with
 * the function's full timeout. An environment freezes once its response is sent, so no job can run
 * "in the background" of the invocation that accepted it. They also take the invocation records Lambda
 * sends the function as its own on-failure destination (infra/aws), which mark a given-up job failed.
 */
const lambda = createLambdaApp(process.env)
// The init phase waits for the start, so the first invocation finds the app built.
await lambda.ready

/** API Gateway (REST v1, HTTP API v2), ALB, or a function URL in BUFFERED mode; and job events. */
export const handler = createLambdaHandler(lambda)

/**
 * A function URL in RESPONSE_STREAM mode: text/event-stream tool calls stream as they run, and
 * responses may exceed the 6 MB buffered limit; and job events. `awslambda.streamifyResponse` is a
 * global of the Lambda Node runtime only (the AWS SDK creates an empty `awslambda` object anywhere, so
 * test the function); elsewhere (tests, plain `node`) this export is undefined.
 */
const runtime = (globalThis as { awslambda?: { streamifyResponse?: (handler: StreamingHandler) => unknown } }).awslambda
const streamify = runtime?.streamifyResponse
export const streamingHandler =
  typeof streamify === 'function'
    ? createStreamingHandler(lambda, (inner) => streamify.call(runtime, inner))
    : undefined
