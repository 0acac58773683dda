/**
 * Producer tallies survive a database outage: the recorder's PostgreSQL goes away (its connections
 * are cut and new ones refused, through a TCP relay the test controls), the flush fails, more
 * traffic arrives, the database comes back, and the next flush writes every request counted.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProducerRecorder } from '../../server/features/producers/recorder.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';

/** A TCP relay to PostgreSQL that can go down (cutting every connection) and come back on its port. */
function relay(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const up = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server!.close(() => resolve());
    });
  return { up, down, url: () => Object.assign(new URL(target), { port: String(port) }).toString() };
}

let pgf: PostgresFixture;
let direct: pg.Pool;
let viaRelay: pg.Pool;
let link: ReturnType<typeof relay>;

beforeAll(async () => {
  pgf = await startPostgres();
  direct = new pg.Pool({ connectionString: pgf.url, max: 1 });
  await new RelationalMigrator(direct, relationalMigrationsFor('4')).up();
  link = relay(new URL(pgf.url));
  await link.up();
  viaRelay = new pg.Pool({ connectionString: link.url(), max: 2, connectionTimeoutMillis: 2_000 });
  // A dropped connection is reported to the pool, not thrown into the test process.
  viaRelay.on('error', () => {});
}, 120_000);

afterAll(async () => {
  await Promise.all([viaRelay?.end(), direct?.end()]);
  await link?.down().catch(() => {});
  await pgf?.stop();
});

const key = (sdkVersion: string) => ({
  projectId: 'p1',
  publicKey: 'pk-1',
  sdkName: 'javascript',
  sdkVersion,
  path: 'ingestion-api' as const,
});

describe('producer tallies across a database outage', () => {
  it('keeps every request counted while the database is away and writes them once it is back', async () => {
    const recorder = new ProducerRecorder(viaRelay, 3_600_000);
    // One flush while the database is up, so the pool holds a live connection that the outage cuts.
    recorder.record(key('3.0.0'));
    await recorder.flush();
    await link.down();
    for (let i = 0; i < 3; i++) recorder.record(key('3.0.0'));
    recorder.record(key('2.9.0'));
    await expect(recorder.flush()).rejects.toThrow();
    recorder.record(key('3.0.0'));
    await link.up();
    await recorder.flush();
    await recorder.close();
    const r = await direct.query('SELECT sdk_version, requests FROM producer_activity ORDER BY sdk_version');
    expect(r.rows.map((row) => [row.sdk_version, Number(row.requests)])).toEqual([
      ['2.9.0', 1],
      ['3.0.0', 5],
    ]);
  });
});
