// A Node fleet on Redis: three instances (src/runtimes/node.ts under tsx) on one s3rver bucket and one
// redis-server. Measures the storage requests an idle fleet makes per instance per minute (target 0: no
// poll runs while nobody calls), and how long a source PUT takes to be served by the other instances.
import { type FleetInstance, startInstance } from '../test/support/fleet'
import { startRedis } from '../test/support/redis'
import { startS3rver } from '../test/support/s3rver'
import { startSourceUpstreams } from '../test/support/source-upstreams'
import { note, printRows, summarize } from './stats'
import { startCountingProxy } from './support/counting-proxy'

const idleMs = Number(process.env.BENCH_FLEET_IDLE_MS ?? 60_000)
const changes = Number(process.env.BENCH_FLEET_CHANGES ?? 20)

const [redis, bucket, upstream] = await Promise.all([startRedis(), startS3rver(), startSourceUpstreams()])
// Every instance reaches the bucket through this proxy, which counts what they ask.
let requests = 0
const proxy = await startCountingProxy(bucket.endpoint, () => {
  requests++
})
const viaProxy = { bucket: bucket.bucket, endpoint: proxy.endpoint }
const env = { TOOLPORT_REDIS_URL: redis.url, TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` }
const instances: FleetInstance[] = []
try {
  instances.push(...(await Promise.all(['a', 'b', 'c'].map((name) => startInstance(viaProxy, { name, env })))))
  const names = async (instance: FleetInstance) => {
    const response = await fetch(`${instance.url}/v1/tools`)
    return ((await response.json()) as { tools: { name: string }[] }).tools.map((tool) => tool.name)
  }
  // Each instance has served the tenant once (its sources read), then the fleet sits idle.
  for (const instance of instances) await names(instance)
  requests = 0
  await new Promise((resolve) => setTimeout(resolve, idleMs))
  const idlePerInstancePerMinute = requests / instances.length / (idleMs / 60_000)

  const latencies: number[] = []
  for (let index = 0; index < changes; index++) {
    const tool = `calc_${index}`
    const manifest = {
      id: 'calc',
      kind: 'http',
      protocol: 'jsonrpc',
      url: `${upstream.url}/rpc`,
      tools: [{ name: tool, method: 'add', effect: 'read', description: 'Adds.', input_schema: { type: 'object' } }],
    }
    const writer = instances[index % 3] as FleetInstance
    const put = await fetch(`${writer.url}/v1/sources/calc`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(manifest),
    })
    if (put.status >= 300) throw new Error(`source PUT answered ${put.status}`)
    const answered = performance.now()
    await Promise.all(
      instances
        .filter((instance) => instance !== writer)
        .map(async (instance) => {
          while (!(await names(instance)).includes(tool)) await new Promise((resolve) => setTimeout(resolve, 5))
          latencies.push(performance.now() - answered)
        }),
    )
  }
  const spread = summarize(latencies)
  printRows(
    'Fleet on Redis (three instances, one bucket)',
    ['measure', 'value', 'target'],
    ['l', 'r', 'l'],
    [
      [
        `storage requests per idle instance per minute (${idleMs / 1000} s idle)`,
        idlePerInstancePerMinute.toFixed(1),
        `0 ${idlePerInstancePerMinute === 0 ? 'met' : 'MISSED'}`,
      ],
      [
        `source change served by the other instances, p50 (${latencies.length} reads)`,
        `${spread.p50.toFixed(0)} ms`,
        '≤ 1 s',
      ],
      [
        'source change served by the other instances, max',
        `${spread.max.toFixed(0)} ms`,
        `≤ 1 s ${spread.max <= 1000 ? 'met' : 'MISSED'}`,
      ],
    ],
  )
  note(
    'Fleet: the latency is from the PUT answer to the first tools listing on another instance that names the new tool, polled every 5 ms.',
  )
} finally {
  for (const instance of instances) await instance.kill()
  proxy.close()
  await Promise.all([redis.stop(), bucket.stop(), upstream.stop()])
}
