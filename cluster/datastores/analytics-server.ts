// `observatory analytics-server`: the embedded ClickHouse engine over ClickHouse's HTTP interface,
// for several processes (and Pods, when bound to the node IP) sharing one analytics store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { statementBounds } from '../../server/platform/datastores/statement-bounds.ts';
import { observatoryCli } from '../paths.ts';
import type { DatastoreOptions } from './postgres.ts';
import { startOnFreePort, startProcess, waitUntilReady } from './processes.ts';

export interface AnalyticsServer {
  url: string;
  client: ClickHouseClient;
  /** The server process (its RSS is the analytics engine's memory). */
  pid: number;
  /** Its data directory. */
  dir: string;
  /** SIGKILL: the store dies mid-request; the data directory stays for a restart on it. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface AnalyticsServerOptions extends DatastoreOptions {
  /** Reuse this data directory (a restart after kill()); default a new temp directory. */
  dir?: string;
  port?: number;
}

/** The analytics server on a free port of the host (default 127.0.0.1) over a temp data dir. */
export async function startAnalyticsServer(options: AnalyticsServerOptions = {}): Promise<AnalyticsServer> {
  const host = options.host ?? '127.0.0.1';
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'obs-analytics-'));
  const start = async (port: number) => {
    const child = startProcess('analytics-server', process.execPath, [
      observatoryCli,
      'analytics-server',
      '--host',
      host,
      '--port',
      String(port),
      '--data',
      dir,
    ]);
    const url = `http://${host}:${port}`;
    await waitUntilReady(child, async () => (await fetch(`${url}/ping`)).ok, { timeoutMs: 60_000 });
    return { child, url };
  };
  // A restart on a given port must get that port; a new server takes any free one.
  const { child, url } =
    options.port === undefined ? await startOnFreePort(host, start) : await start(options.port);
  // Loads and checks run statements of up to two minutes: bounded as a job's, with progress headers.
  const client = createAnalyticsClient({ url }, statementBounds('jobs', { requestTimeoutSeconds: 120 }));
  return {
    url,
    client,
    pid: child.pid,
    dir,
    async kill() {
      await child.kill('SIGKILL');
      await client.close();
    },
    async stop() {
      await client.close();
      await child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
