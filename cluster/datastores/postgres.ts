import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  ensureAptPackages,
  type ManagedProcess,
  onProcessExit,
  removeDirSync,
  runCommand,
  startOnFreePort,
  startProcess,
  waitUntilReady,
} from './processes.ts';

export interface PostgresFixture {
  /** postgres:// URL of a database that belongs to this fixture alone. */
  url: string;
  stop(): Promise<void>;
}

const MIN_MAJOR = 15;
const DEBIAN_ROOT = '/usr/lib/postgresql';

export interface DatastoreOptions {
  /**
   * The address to listen on (default 127.0.0.1). Given, the server is always a throwaway one on
   * that address (a local cluster's node IP, so Pods reach it): a server named by the environment
   * is not known to be reachable from there.
   */
  host?: string;
}

/**
 * A PostgreSQL >= 15 database for one test file or local deployment: a fresh database on
 * `DATABASE_URL` when that is set (and no host is asked for), otherwise a throwaway cluster from
 * Debian's packages on a free port.
 */
export function startPostgres(options: DatastoreOptions = {}): Promise<PostgresFixture> {
  const external = process.env['DATABASE_URL'];
  return external && !options.host
    ? createFreshDatabase(external)
    : startThrowawayCluster(options.host ?? '127.0.0.1');
}

/**
 * On a shared server each call gets its own database, so test files running at once do not see
 * each other's tables. stop() drops it again (best effort) so repeated runs do not pile them up;
 * the server itself is not ours to stop.
 */
async function createFreshDatabase(serverUrl: string): Promise<PostgresFixture> {
  const name = `observatory_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withClient(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let stopped: Promise<void> | undefined;
  return {
    url: url.toString(),
    stop: () => {
      stopped ??= withClient(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => {},
        () => {},
      );
      return stopped;
    },
  };
}

async function withClient<T>(url: string, f: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await f(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The newest Debian PostgreSQL >= 15, as its bin directory and major version. */
export function findDebianPostgres(): { bin: string; major: number } | undefined {
  if (!existsSync(DEBIAN_ROOT)) return undefined;
  const majors = readdirSync(DEBIAN_ROOT)
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((m) => m >= MIN_MAJOR)
    .filter((m) => ['postgres', 'initdb'].every((b) => existsSync(join(DEBIAN_ROOT, String(m), 'bin', b))))
    .sort((a, b) => b - a);
  const major = majors[0];
  return major === undefined ? undefined : { bin: join(DEBIAN_ROOT, String(major), 'bin'), major };
}

function userIds(name: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  const fields = line?.split(':');
  if (!fields || fields.length < 4) throw new Error(`no user ${name} in /etc/passwd`);
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  // A refused connection also surfaces as an 'error' event; without a listener it would throw.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function startThrowawayCluster(host: string): Promise<PostgresFixture> {
  await ensureAptPackages(['postgresql'], () => findDebianPostgres() !== undefined);
  const found = findDebianPostgres();
  if (!found) throw new Error(`no PostgreSQL >= ${MIN_MAJOR} under ${DEBIAN_ROOT}`);

  const dir = mkdtempSync(join(tmpdir(), 'observatory-pg-'));
  // At exit postgres is still shutting down (SIGQUIT) while we delete: removeDirSync copes.
  const unregisterDir = onProcessExit(() => removeDirSync(dir));
  const data = join(dir, 'data');
  // initdb and postgres refuse to run as root; as root we run them as Debian's postgres user,
  // which then has to own the directory (data and the unix socket both live in it).
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = userIds('postgres');
    chownSync(dir, uid, gid);
  }
  const command = (binary: string, args: string[]): [string, string[]] =>
    asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(found.bin, binary), ...args]]
      : [join(found.bin, binary), args];

  try {
    await runCommand(
      'initdb',
      // --no-locale: the C locale exists everywhere, so initdb never trips over the caller's LANG.
      ...command('initdb', [
        '-D',
        data,
        '-A',
        'trust',
        '-U',
        'postgres',
        '-E',
        'UTF8',
        '--no-locale',
        '--no-sync',
        '--no-instructions',
      ]),
      { timeoutMs: 60_000 },
    );
    // initdb trusts loopback only; Pods connect from their own addresses on the node's bridges.
    if (host !== '127.0.0.1') appendFileSync(join(data, 'pg_hba.conf'), 'host all all samenet trust\n');
    const { child, url } = await startServer(data, dir, host, found.major, command);
    let stopped: Promise<void> | undefined;
    return {
      url,
      stop: () => {
        stopped ??= (async () => {
          await stopPostmaster(child, data);
          removeDirSync(dir);
          unregisterDir();
        })();
        return stopped;
      },
    };
  } catch (err) {
    removeDirSync(dir);
    unregisterDir();
    throw err;
  }
}

async function startServer(
  data: string,
  socketDir: string,
  host: string,
  major: number,
  command: (binary: string, args: string[]) => [string, string[]],
): Promise<{ child: ManagedProcess; url: string }> {
  return startOnFreePort(host, async (port) => {
    const url = `postgres://postgres@${host}:${port}/postgres`;
    const child = startProcess(
      `postgres ${major} on port ${port}`,
      ...command('postgres', [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        socketDir,
        '-c',
        `listen_addresses=${host}`,
        // Throwaway data: durability only costs time here.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
      ]),
      // Immediate shutdown: fast, and unlike SIGKILL it removes postgres's SysV shared memory.
      { killSignal: 'SIGQUIT' },
    );
    await waitUntilReady(child, () => canQuery(url), { timeoutMs: 30_000, intervalMs: 50 });
    return { child, url };
  });
}

/**
 * Immediate shutdown (SIGQUIT) of the postmaster: it takes its backends down and removes its shared
 * memory (SIGKILL would leak the SysV segment). We signal the postmaster alone, found through
 * postmaster.pid, and let runuser exit on its own when its child does, rather than depend on how
 * runuser relays signals. SIGKILL for the whole group if that takes too long.
 */
async function stopPostmaster(child: ManagedProcess, data: string): Promise<void> {
  const pid = postmasterPid(data);
  if (pid !== undefined && !child.exitInfo()) {
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      // Already gone.
    }
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref());
    if ((await Promise.race([child.exited, timeout])) !== 'timeout') return;
  }
  await child.kill('SIGKILL', 0);
}

function postmasterPid(data: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
