/**
 * Locks between processes of one machine, each naming its holder's pid so that a lock whose holder
 * died is taken over: a file created exclusively, for what one process at a time may open (the
 * caller refuses a live holder at once), and a directory, for a build or cache entry that parallel
 * processes wait for (mkdir is atomic: whoever creates the directory holds it).
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Whether a process with this pid exists (EPERM: it does, owned by another user). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Creates the lock file `path` holding our pid, taking it over from a holder that is gone (or is
 * this process). Returns the pid of a live holder instead, having taken nothing.
 */
export function tryLockFile(path: string): number | undefined {
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (holder !== process.pid && processAlive(holder)) return holder;
      rmSync(path, { force: true });
    }
  }
}

/** Runs `fn` holding the lock directory `lockPath`, waiting while a live process holds it. */
export async function withFileLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const pidFile = join(lockPath, 'pid');
  await mkdir(dirname(lockPath), { recursive: true });
  for (;;) {
    try {
      await mkdir(lockPath);
      await writeFile(pidFile, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
      const age = Date.now() - (await stat(lockPath).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      // No pid after a while: the owner died between mkdir and writing its pid.
      if (owner ? !processAlive(owner) : age > 10_000) {
        await rm(lockPath, { recursive: true, force: true });
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { recursive: true, force: true });
  }
}
