import { readdirSync, readFileSync } from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';

const statFields = (pid: number | string) =>
  readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ').map(Number);

/** CPU time (user + system) a process has used, in seconds (Linux clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const f = statFields(pid);
  return (f[11]! + f[12]!) / 100;
}

/** The pid of a process's parent. */
export const parentPid = (pid: number): number => statFields(pid)[1]!;

/**
 * CPU time of a process and all its children, live (their own time) and ended (the time the kernel
 * adds to the parent when it reaps them): a PostgreSQL server's backends, say, which come and go.
 */
export function cpuSecondsTree(pid: number): number {
  const f = statFields(pid);
  let ticks = f[11]! + f[12]! + f[13]! + f[14]!;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === pid) continue;
    try {
      const c = statFields(entry);
      // Field 4 of stat (index 1 after the name) is the parent's pid.
      if (c[1] === pid) ticks += c[11]! + c[12]!;
    } catch {
      // Ended while we looked: its time is in the parent's now.
    }
  }
  return ticks / 100;
}

/** Longest wait for the store's background merges to finish before a timed phase. */
const SETTLE_TIMEOUT_MS = 120_000;

/**
 * Waits until the store runs no merge, so a timed phase does not pay for the parts an earlier phase
 * left (each phase's own merges run during it, as they would in production). Bounded: a store that
 * does not settle is reported, not waited for.
 */
export async function settle(ch: ClickHouseClient): Promise<void> {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const rs = await ch.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' });
    if (Number((await rs.json<{ n: string }>())[0]!.n) === 0) return;
    if (performance.now() > deadline) {
      process.stdout.write(`  (merges still running after ${SETTLE_TIMEOUT_MS / 1000} s; timing anyway)\n`);
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
