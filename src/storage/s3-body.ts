export function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.close()
    },
  })
}

interface BodyState {
  size: number
  failed: boolean
  error: unknown
}

/** Counts the bytes of a stream body and remembers whether the stream itself failed. */
export function trackBody(source: ReadableStream<Uint8Array>): {
  stream: ReadableStream<Uint8Array>
  state: BodyState
  cancel: (reason: unknown) => Promise<void>
} {
  const state: BodyState = { size: 0, failed: false, error: undefined }
  const reader = source.getReader()
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          return
        }
        state.size += value.byteLength
        controller.enqueue(value)
      } catch (error) {
        state.failed = true
        state.error = error
        controller.error(error)
      }
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  return { stream, state, cancel: (reason) => reader.cancel(reason).catch(() => {}) }
}
