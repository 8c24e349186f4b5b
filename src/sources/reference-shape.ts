/**
 * The reference plugin manifest's shape (an `aiTools` list whose entries point at `rpc.methods`, which
 * hold the schemas) as an `http` source with JSON-RPC: each aiTools entry becomes a tool with its
 * method's inputSchema and outputSchema. Anything else is returned unchanged for the schema to judge.
 */
export function fromReferenceShape(json: unknown): unknown {
  if (!isObject(json) || !Array.isArray(json.aiTools)) return json
  const { aiTools, rpc, ...rest } = json
  const methods = isObject(rpc) && isObject(rpc.methods) ? rpc.methods : {}
  const tools = aiTools.map((entry) => {
    if (!isObject(entry)) return entry
    const { method, ...tool } = entry
    const declared = typeof method === 'string' && isObject(methods[method]) ? methods[method] : {}
    return {
      ...tool,
      ...(typeof method === 'string' ? { method } : {}),
      ...(declared.inputSchema !== undefined ? { input_schema: declared.inputSchema } : {}),
      ...(declared.outputSchema !== undefined ? { output_schema: declared.outputSchema } : {}),
      ...(tool.description === undefined && typeof declared.description === 'string'
        ? { description: declared.description }
        : {}),
    }
  })
  return { kind: 'http', protocol: 'jsonrpc', ...rest, tools }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
