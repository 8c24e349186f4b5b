/**
 * The known name a mistyped one most likely meant ("outputPath" → "output_path", "comand" →
 * "command"), or undefined when none is close. Case, "_" and "-" do not count; then at most a third
 * of the letters may differ (Levenshtein distance), so an unrelated name is never suggested.
 */
export function closestName(wrong: string, known: Iterable<string>): string | undefined {
  const target = fold(wrong)
  let best: { name: string; distance: number } | undefined
  for (const name of known) {
    const distance = editDistance(target, fold(name))
    if (
      distance <= Math.max(1, Math.floor(Math.max(target.length, name.length) / 3)) &&
      (!best || distance < best.distance)
    ) {
      best = { name, distance }
    }
  }
  return best?.name
}

function fold(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '')
}

/** Levenshtein distance, in one row of memory; names are short. */
function editDistance(left: string, right: string): number {
  if (left.length > 256 || right.length > 256) return Number.POSITIVE_INFINITY
  const row = Array.from({ length: right.length + 1 }, (_, index) => index)
  for (let i = 1; i <= left.length; i++) {
    let diagonal = row[0] ?? 0
    row[0] = i
    for (let j = 1; j <= right.length; j++) {
      const above = row[j] ?? 0
      row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + (left[i - 1] === right[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[right.length] ?? 0
}
