import { serve } from '@hono/node-server'
import { startNodeService } from './node-service'

// The Node entry point: build real dependencies from the environment, then serve until a signal.
const service = await startNodeService(process.env).catch((error: unknown) => {
  console.error(`toolport: ${(error as Error).message}`)
  process.exit(1)
})
const server = serve({ fetch: service.app.fetch, port: service.config.port, hostname: service.config.host }, (info) => {
  service.log.info('listening', {
    url: `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`,
  })
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => server.close(() => process.exit(0)))
}
