import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/** The lines of a Markdown text with fenced blocks and inline code blanked out (their links are not links). */
function withoutCode(markdown: string): string[] {
  let fence: string | undefined
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1]
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
      return ''
    }
    if (marker) {
      fence = marker
      return ''
    }
    return line.replace(/(`+)[\s\S]*?\1/g, (code) => ' '.repeat(code.length))
  })
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of withoutCode(readFileSync(file, 'utf8').replace(/`/g, ''))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

/** Every relative link of a Markdown file whose file or #anchor does not exist, as "file:line: target". */
export function brokenLinks(file: string): string[] {
  const broken: string[] = []
  withoutCode(readFileSync(file, 'utf8')).forEach((line, index) => {
    for (const match of line.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1] as string
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const [path = '', anchor] = target.split('#')
      const destination = path ? resolve(dirname(file), decodeURIComponent(path)) : file
      const where = `${file}:${index + 1}: ${target}`
      if (!existsSync(destination)) broken.push(`${where} (no such file)`)
      else if (anchor !== undefined && (statSync(destination).isDirectory() || !destination.endsWith('.md')))
        broken.push(`${where} (anchor on a file that is not Markdown)`)
      else if (anchor !== undefined && !anchorsOf(destination).has(decodeURIComponent(anchor)))
        broken.push(`${where} (no such heading)`)
    }
  })
  return broken
}
