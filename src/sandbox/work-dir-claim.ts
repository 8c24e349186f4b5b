import { mkdir, open, readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * One TOOLPORT_WORK_DIR serves one process. The workspace copies in it belong to the process that
 * checked them out (its change markers, its overlay mounts); a second toolport process on the same
 * folder rewrites them under the first one's running commands, which then fail (measured: "cannot
 * create edits.txt: Operation not permitted" in every command of the second of two processes). The
 * folder is claimed by a pid file; a claim whose process is gone (a crash, kill -9) is taken over.
 * Answers a problem for the log and the tool when another live process holds the folder.
 */
export async function claimWorkDir(workDir: string): Promise<string | undefined> {
  await mkdir(workDir, { recursive: true, mode: 0o711 })
  const claim = join(workDir, 'owner.pid')
  if (await create(claim)) return undefined
  const holder = Number((await readFile(claim, 'utf8').catch(() => '')).trim())
  if (holder === process.pid) return undefined
  if (Number.isInteger(holder) && holder > 0 && alive(holder)) return inUse(workDir, holder)
  // Left by a process that is gone: removed, then created exclusively, so of two processes taking it
  // over at once one gets it and the other finds it live.
  await unlink(claim).catch(() => {})
  if (await create(claim)) return undefined
  const winner = Number((await readFile(claim, 'utf8').catch(() => '')).trim())
  return inUse(workDir, winner)
}

function inUse(workDir: string, pid: number): string {
  return `TOOLPORT_WORK_DIR ${workDir} is in use by another toolport process (pid ${pid}); give each process its own work folder`
}

async function create(claim: string): Promise<boolean> {
  try {
    const handle = await open(claim, 'wx', 0o600)
    await handle.writeFile(String(process.pid))
    await handle.close()
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
