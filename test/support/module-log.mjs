// Preloaded into a service under test (`node --import ./test/support/module-log.mjs dist/node.js`):
// appends every package file the process loads to the file MODULE_LOG_FILE names, one `kind path` a
// line: `esm` through the module loader's resolve hook (every import, in the main thread and in each
// worker thread, which inherits --import), `cjs` through require (what CommonJS packages load inside).
// It reads only what Node itself resolves, so what the log shows is what the service really loaded.
import { appendFileSync } from 'node:fs'
import Module, { register } from 'node:module'

const file = process.env.MODULE_LOG_FILE
if (!file) throw new Error('module-log.mjs: set MODULE_LOG_FILE')

// Resolve hooks run in a loader thread of their own: the hook module gets the file through its data.
const hooks = `
import { appendFileSync } from 'node:fs'
let file
export function initialize(data) { file = data.file }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  if (result.url.includes('/node_modules/')) appendFileSync(file, 'esm ' + result.url + '\\n')
  return result
}
`
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { file } })

const load = Module._load
Module._load = function (request, parent, isMain) {
  const loaded = load.call(this, request, parent, isMain)
  if (!request.startsWith('node:') && !Module.isBuiltin(request)) {
    try {
      const path = Module._resolveFilename(request, parent, isMain)
      if (path.includes('/node_modules/')) appendFileSync(file, `cjs ${path}\n`)
    } catch {}
  }
  return loaded
}
