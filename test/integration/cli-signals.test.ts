/**
 * A Job's command stops when Kubernetes stops its Pod. In a container the CLI is PID 1, where Node
 * gets no default action for SIGTERM: without its own handler a backfill step the operator stopped
 * (hibernation) went on writing chunks until the kubelet's SIGKILL, 30 s later (found on the real
 * node). Here the CLI runs as PID 1 of a PID namespace of its own (`unshare`), as in a container:
 * a one-shot command blocked on a real PostgreSQL lock ends at once on SIGTERM with 143. (The
 * servers, `web` and `worker`, drain on SIGTERM with their own handler instead.)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { observatoryCli } from '../../cluster/paths.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { waitFor } from '../fixtures/wait.ts';

/** The relational migrator's advisory lock (server/platform/migrations/relational/runner.ts). */
const MIGRATION_LOCK = 73_657_201;

let db: PostgresFixture;
let holder: pg.Client;

beforeAll(async () => {
  db = await startPostgres();
  holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
}, 60_000);
afterAll(async () => {
  await holder?.end();
  await db?.stop();
});

/** `observatory ARGS` as PID 1 of a new PID namespace; resolves with its exit code. */
function asPid1(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(
    'unshare',
    ['--pid', '--fork', '--kill-child', process.execPath, observatoryCli, ...args],
    {
      env: { PATH: process.env['PATH'], LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  /** The CLI's own pid as the machine sees it: unshare's one child. */
  const cli = () => {
    const text = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
    return text ? Number(text.split(' ')[0]) : undefined;
  };
  return { child, exited, cli, stderr: () => stderr };
}

const waiters = async () =>
  Number(
    (
      await holder.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`,
        [MIGRATION_LOCK],
      )
    ).rows[0]!.n,
  );

it('a one-shot command ends at once on SIGTERM as PID 1 (143), also while it waits on the store', async () => {
  await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  const run = asPid1(['migrate', 'up'], {
    DATABASE_URL: db.url,
    CLICKHOUSE_URL: 'http://127.0.0.1:1',
  });
  try {
    await waitFor(
      'migrate waiting on the held lock',
      async () => ((await waiters()) > 0 ? true : undefined),
      30_000,
    );
    process.kill(run.cli()!, 'SIGTERM');
    const code = await Promise.race([
      run.exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 10_000)),
    ]);
    expect(code, run.stderr()).toBe(143);
  } finally {
    run.child.kill('SIGKILL');
    await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}, 60_000);
