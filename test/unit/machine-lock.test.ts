// The one-node-per-machine lock against real processes and a real file: taken when free or when
// its holder is gone, waited for while a live holder keeps it, refused past the bound.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { takeMachineLock } from '../../cluster/machine-lock.ts';

let dir: string;
let lock: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'machine-lock-'));
  lock = join(dir, 'node.pid');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A live process that exits when `stop` is called (or after 60 s at most). */
function holderProcess() {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

const fast = { pollMs: 20, reportEveryMs: 100 };

describe('takeMachineLock', () => {
  it('takes a free lock and writes its own pid', async () => {
    await takeMachineLock(lock, { waitMs: 0 });
    expect(await readFile(lock, 'utf8')).toBe(String(process.pid));
  });

  it('takes over a lock whose process is gone', async () => {
    const gone = holderProcess();
    await gone.stop();
    await writeFile(lock, String(gone.pid));
    await takeMachineLock(lock, { waitMs: 0 });
    expect(await readFile(lock, 'utf8')).toBe(String(process.pid));
  });

  it('refuses at once with no wait, naming the live holder', async () => {
    const live = holderProcess();
    try {
      await writeFile(lock, String(live.pid));
      await expect(takeMachineLock(lock, { waitMs: 0 })).rejects.toThrow(
        `a local node already runs on this machine (process ${live.pid}); one node per machine`,
      );
      expect(await readFile(lock, 'utf8')).toBe(String(live.pid));
    } finally {
      await live.stop();
    }
  });

  it('waits for a live holder, reporting whom it waits for, and takes the lock once it is gone', async () => {
    const live = holderProcess();
    await writeFile(lock, String(live.pid));
    const lines: string[] = [];
    const taking = takeMachineLock(lock, { waitMs: 30_000, log: (l) => lines.push(l), ...fast });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await live.stop();
    await taking;
    expect(await readFile(lock, 'utf8')).toBe(String(process.pid));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines[0]).toMatch(
      new RegExp(`^waiting for the local node of process ${live.pid} \\(0 s so far\\)$`),
    );
  });

  it('gives up past the bound, saying how long it waited', async () => {
    const live = holderProcess();
    try {
      await writeFile(lock, String(live.pid));
      await expect(takeMachineLock(lock, { waitMs: 200, ...fast })).rejects.toThrow(/after waiting 0 s$/);
    } finally {
      await live.stop();
    }
  });

  it('lets exactly one of two processes starting at once take a free lock', async () => {
    const module = join(import.meta.dirname, '../../cluster/machine-lock.ts');
    // Each reports, then holds what it took until killed (60 s at most).
    const script = `import { takeMachineLock } from ${JSON.stringify(module)};
      takeMachineLock(${JSON.stringify(lock)}, { waitMs: 0 }).then(
        () => console.log('took'), (e) => console.log('refused: ' + e.message));
      setTimeout(() => {}, 60_000);`;
    const starters = [0, 1].map(() => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const said = new Promise<string>((resolve) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.trim());
        });
        child.once('exit', () => resolve(out.trim() || 'exited'));
      });
      return { child, exited, said };
    });
    try {
      const verdicts = await Promise.all(starters.map((s) => s.said));
      expect(verdicts.filter((v) => v === 'took')).toHaveLength(1);
      expect(verdicts.filter((v) => v.startsWith('refused: a local node already runs'))).toHaveLength(1);
      const winner = starters[verdicts.indexOf('took')]!.child.pid;
      expect(await readFile(lock, 'utf8')).toBe(String(winner));
    } finally {
      for (const s of starters) s.child.kill('SIGKILL');
      await Promise.all(starters.map((s) => s.exited));
    }
  });
});
