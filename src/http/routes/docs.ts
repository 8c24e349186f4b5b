import type { Hono } from 'hono'
import type { AppEnv } from '../env'

export interface StaticAsset {
  body: Uint8Array | string
  contentType: string
}

/** Supplies the API reference's static files; runtime-specific (the Node runtime reads swagger-ui-dist). */
export type DocsAssetLoader = (name: string) => Promise<StaticAsset | null>

const docsAssetNames = new Set(['swagger-ui.css', 'swagger-ui-bundle.js'])

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolport API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`

const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, persistAuthorization: true })\n`

// Everything the page needs comes from this origin, so the reference works offline.
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:"

export function registerDocsRoutes(app: Hono<AppEnv>, loadAsset: DocsAssetLoader | undefined): void {
  app.get('/docs', (context) => {
    context.header('Content-Security-Policy', contentSecurityPolicy)
    return context.html(page)
  })
  app.get('/docs/init.js', (context) => {
    context.header('Content-Type', 'text/javascript; charset=utf-8')
    return context.body(init)
  })
  app.get('/docs/assets/:name', async (context) => {
    const name = context.req.param('name')
    const asset = docsAssetNames.has(name) && loadAsset ? await loadAsset(name) : null
    if (!asset) return context.notFound()
    context.header('Content-Type', asset.contentType)
    context.header('Cache-Control', 'public, max-age=86400')
    return context.body(typeof asset.body === 'string' ? asset.body : (asset.body as Uint8Array<ArrayBuffer>))
  })
}
