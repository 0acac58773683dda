/**
 * `observatory analytics-server --port N --data DIR [--host 127.0.0.1]`: the embedded ClickHouse
 * engine (one process owns a data directory) served over ClickHouse's HTTP interface, so that web,
 * worker and Jobs share one store through @clickhouse/client. Ready when `GET /ping` answers `Ok.`;
 * one line on stdout says so. SIGTERM/SIGINT: stop accepting, finish running requests, release the
 * directory, exit 0. `CLICKHOUSE_USER` (default `default`) and `CLICKHOUSE_PASSWORD` (default none)
 * are the credentials it accepts.
 */
import { resolve } from 'node:path';
import { analyticsServerProcessConfig } from '../kernel/config/processes.ts';
import { startAnalyticsServer } from '../platform/analytics-server/http-interface.ts';
import { intFlag, parseFlags, UsageError } from './usage.ts';

export const USAGE = 'usage: observatory analytics-server --port N --data DIR [--host 127.0.0.1]';

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    port: { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = intFlag(values.port, 'port');
  if (port === undefined || port > 65535) throw new UsageError(`--port is required (0-65535)\n${USAGE}`);
  if (!values.data) throw new UsageError(`--data is required\n${USAGE}`);
  const dataDir = resolve(values.data);

  let server: Awaited<ReturnType<typeof startAnalyticsServer>>;
  try {
    server = await startAnalyticsServer({
      dataDir,
      host: values.host ?? '127.0.0.1',
      port,
      ...analyticsServerProcessConfig(),
    });
  } catch (err) {
    process.stderr.write(`observatory analytics-server: cannot start: ${(err as Error).message}\n`);
    return 1;
  }
  process.stdout.write(
    `analytics-server ready: ${server.url} (ClickHouse ${server.engine.info.version}, data ${dataDir})\n`,
  );

  const signal = await new Promise<NodeJS.Signals>((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });
  process.stderr.write(`analytics-server: ${signal}, finishing running requests\n`);
  await server.close();
  return 0;
}
