/**
 * YAML text parsed with the `yaml` package, loaded on first use. Aliases are capped: a billion-laughs
 * document is refused, not expanded. The package ships only a CommonJS build for Node, and a bundled
 * chunk of a CommonJS module (the Lambda build, scripts/build-targets.mjs) exports only `default`:
 * `parse` is taken from whichever the import holds.
 */
export async function parseYaml(text: string): Promise<unknown> {
  const loaded = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') }
  const parse = loaded.parse ?? loaded.default?.parse
  if (!parse) throw new Error('the yaml package gave no parse function')
  return parse(text, { maxAliasCount: 100 })
}
