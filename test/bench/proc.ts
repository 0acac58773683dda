import { readFileSync } from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';

/** CPU time (user + system) a process has used, in seconds (Linux clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
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
