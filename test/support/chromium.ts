import { execFileSync } from 'node:child_process'

/** The Chromium processes this test process started (its direct children), to freeze or kill them. */
export function chromiumChildren(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid)])
      .toString()
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => /chrom/i.test(execFileSync('ps', ['-o', 'comm=', '-p', String(pid)]).toString()))
  } catch {
    return []
  }
}
