import { existsSync, mkdtempSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatastoreOptions } from './postgres.ts';
import {
  ensureAptPackages,
  type ManagedProcess,
  onProcessExit,
  removeDirSync,
  startOnFreePort,
  startProcess,
  waitUntilReady,
} from './processes.ts';

export interface RedisFixture {
  /** redis:// URL */
  url: string;
  stop(): Promise<void>;
}

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'];

export function findRedisServer(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * A Redis for one test file or local deployment: `REDIS_URL` when set and no host is asked for
 * (shared as is: stop() does nothing, and tests sharing it must keep their keys apart), otherwise
 * Debian's redis-server on a free port of the host (default 127.0.0.1), without persistence.
 */
export async function startRedis(options: DatastoreOptions = {}): Promise<RedisFixture> {
  const external = process.env['REDIS_URL'];
  if (external && !options.host) return { url: external, stop: async () => {} };
  const host = options.host ?? '127.0.0.1';

  await ensureAptPackages(['redis-server'], () => findRedisServer() !== undefined);
  const binary = findRedisServer();
  if (!binary) throw new Error('redis-server not found');

  // Its working directory, so that nothing it might write lands in the caller's cwd.
  const dir = mkdtempSync(join(tmpdir(), 'observatory-redis-'));
  const unregisterDir = onProcessExit(() => removeDirSync(dir));
  try {
    const { child, port } = await startServer(binary, dir, host);
    let stopped: Promise<void> | undefined;
    return {
      url: `redis://${host}:${port}`,
      stop: () => {
        stopped ??= (async () => {
          await child.kill('SIGTERM');
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
  binary: string,
  dir: string,
  host: string,
): Promise<{ child: ManagedProcess; port: number }> {
  return startOnFreePort(host, async (port) => {
    const child = startProcess(
      `redis-server on port ${port}`,
      binary,
      [
        '--port',
        String(port),
        '--bind',
        host,
        // Pods reach it from their own addresses; it is bound to a local, machine-only address.
        '--protected-mode',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--daemonize',
        'no',
      ],
      { cwd: dir },
    );
    await waitUntilReady(child, () => answersPing(host, port), { timeoutMs: 20_000, intervalMs: 25 });
    return { child, port };
  });
}

/** PING over a raw socket: ready means +PONG, not merely an open port (it answers -LOADING first). */
function answersPing(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}
