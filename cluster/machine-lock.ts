// The one-node-per-machine lock: a pid file created exclusively (so two starters cannot both take
// it), taken over when its process is gone, and waited for, within a bound, while a live process
// holds it, so a second engineer's run queues instead of failing at once.
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { processAlive } from '../server/platform/datastores/lock-file.ts';

export interface MachineLockOptions {
  /** How long to wait for a live holder before giving up (0: fail at once). */
  waitMs: number;
  log?: (line: string) => void;
  pollMs?: number;
  /** How often the wait is reported. */
  reportEveryMs?: number;
}

/**
 * Who holds the lock: a live pid, 'starting' (created, pid not yet written), or undefined once a
 * dead holder's file has been removed.
 */
async function holder(path: string): Promise<number | 'starting' | undefined> {
  const owner = Number(await readFile(path, 'utf8').catch(() => '0'));
  if (owner && processAlive(owner)) return owner;
  const age = Date.now() - (await stat(path).catch(() => ({ mtimeMs: 0 }))).mtimeMs;
  if (!owner && age < 5_000) return 'starting';
  await rm(path, { force: true });
  return undefined;
}

export async function takeMachineLock(path: string, options: MachineLockOptions): Promise<void> {
  const started = Date.now();
  let reportedAt = -Infinity;
  for (;;) {
    try {
      await writeFile(path, String(process.pid), { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await holder(path);
    if (owner === process.pid) return;
    if (owner === undefined) continue;
    const waited = Date.now() - started;
    const who = owner === 'starting' ? 'another process' : `process ${owner}`;
    if (waited >= options.waitMs) {
      const after = options.waitMs > 0 ? ` after waiting ${Math.round(waited / 1000)} s` : '';
      throw new Error(`a local node already runs on this machine (${who}); one node per machine${after}`);
    }
    if (waited - reportedAt >= (options.reportEveryMs ?? 30_000)) {
      reportedAt = waited;
      options.log?.(`waiting for the local node of ${who} (${Math.round(waited / 1000)} s so far)`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 2_000));
  }
}
