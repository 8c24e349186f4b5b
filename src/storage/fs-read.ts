import { type BigIntStats, read as readCallback, readFile as readFileCallback, readFileSync, readSync } from 'node:fs'

// Node's largest single read (kIoMaxLength); fs.readFile refuses files above it.
const maxSingleRead = 2 ** 31 - 1

/** The whole file behind fd whose fstat is `stats`: as fs.readFile, which reads up to the size its own fstat reports. */
export async function readWhole(fd: number, stats: BigIntStats): Promise<Uint8Array> {
  const size = Number(stats.size)
  // A file that reports no size is read to its end, and one past Node's single-read limit gets
  // readFile's own error: both exactly as FileHandle.readFile did.
  if (size === 0 || size > maxSingleRead) {
    return new Uint8Array(await settle<Buffer>((done) => readFileCallback(fd, done)))
  }
  const buffer = new Uint8Array(size)
  let filled = 0
  while (filled < size) {
    const bytesRead = await settle<number>((done) => readCallback(fd, buffer, filled, size - filled, null, done))
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return filled === size ? buffer : buffer.subarray(0, filled)
}

/** readWhole with synchronous calls, for small files (fs.ts, syncReadMaxBytes). */
export function readWholeSync(fd: number, stats: BigIntStats): Uint8Array {
  const size = Number(stats.size)
  if (size === 0 || size > maxSingleRead) return new Uint8Array(readFileSync(fd))
  const buffer = new Uint8Array(size)
  let filled = 0
  while (filled < size) {
    const bytesRead = readSync(fd, buffer, filled, size - filled, null)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return filled === size ? buffer : buffer.subarray(0, filled)
}

/** A node:fs callback call as a promise. */
function settle<T>(call: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => call((error, value) => (error ? reject(error) : resolve(value))))
}
