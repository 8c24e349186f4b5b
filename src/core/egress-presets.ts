/**
 * Host lists for common package registries and source hosts, named with `@` in any egress allow-list
 * (`TOOLPORT_SHELL_EGRESS_ALLOW=@npm,@pypi`, a key's `egress`, a call's `egress`). None is open unless
 * named: the preset is off by default. `@registries` is all of them. HTTPS only (port 443), because
 * every one of these serves HTTPS and a plain-HTTP mirror would be a downgrade.
 */
export const egressPresets: Readonly<Record<string, readonly string[]>> = {
  npm: ['registry.npmjs.org:443', 'registry.yarnpkg.com:443'],
  pypi: ['pypi.org:443', 'files.pythonhosted.org:443'],
  github: ['github.com:443', '*.github.com:443', '*.githubusercontent.com:443'],
  gitlab: ['gitlab.com:443', 'registry.gitlab.com:443'],
  crates: ['crates.io:443', 'index.crates.io:443', 'static.crates.io:443'],
  go: ['proxy.golang.org:443', 'sum.golang.org:443'],
  rubygems: ['rubygems.org:443', 'index.rubygems.org:443'],
  maven: ['repo.maven.apache.org:443', 'repo1.maven.org:443'],
}

/** Every preset together. */
export const allPresetsName = 'registries'

export function presetNames(): string[] {
  return [...Object.keys(egressPresets), allPresetsName]
}

/** The patterns of `@name`, or undefined for a name that is not a preset. */
export function presetPatterns(name: string): readonly string[] | undefined {
  if (name === allPresetsName) return Object.values(egressPresets).flat()
  return Object.hasOwn(egressPresets, name) ? egressPresets[name] : undefined
}
