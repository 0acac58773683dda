// `observatory analytics-server`: the embedded ClickHouse engine over ClickHouse's HTTP interface,
// for several processes (and Pods, when bound to the node IP) sharing one analytics store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { observatoryCli } from '../paths.ts';
import { freePort } from '../ports.ts';
import type { DatastoreOptions } from './postgres.ts';
import { startProcess, waitUntilReady } from './processes.ts';

export interface AnalyticsServer {
  url: string;
  client: ReturnType<typeof createClient>;
  stop(): Promise<void>;
}

/** The analytics server on a free port of the host (default 127.0.0.1) over a temp data dir. */
export async function startAnalyticsServer(options: DatastoreOptions = {}): Promise<AnalyticsServer> {
  const host = options.host ?? '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), 'obs-analytics-'));
  const port = await freePort(host);
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
  const client = createClient({ url, request_timeout: 120_000 });
  return {
    url,
    client,
    async stop() {
      await client.close();
      await child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
