/**
 * PostgreSQL for the one-process `observatory dev` mode: PGlite (PostgreSQL compiled to WASM, in
 * this process) served on a loopback TCP port by pglite-socket, so the rest of the service talks
 * to it with `pg` exactly as to a real server.
 *
 * One connection at a time. PGlite is a single backend, i.e. ONE session, and PGLiteSocketServer
 * (0.2.17) multiplexes every client connection onto it message by message. What we saw with `pg`:
 *  - With its default `maxConnections: 1` a second connection is closed at once ("Connection
 *    terminated unexpectedly"). That also hits a pg.Pool of size 1: after a failed query the pool
 *    throws that client away and connects anew before the server has noticed the old socket close,
 *    so the query after every error failed.
 *  - With more connections allowed, one connection's extended-query messages (Parse, Bind, Execute,
 *    Sync) are kept together only when they arrive in one socket read, or inside BEGIN...COMMIT.
 *    A query with a large parameter arrives in several reads and another connection's Parse can land
 *    in between: with a pool of 10, queries with a 2 MB parameter got another query's statement.
 *  - All connections share the session: prepared statements (pg's `name:` option), SET, temporary
 *    tables. A second connection preparing the same name fails with "already exists", and a new
 *    connection inherits what the previous one left (run `DISCARD ALL` on connect if that matters).
 * Hence: callers use a pg pool of size `poolSize` (1). The server still accepts a few connections
 * so the pool's replacement connection is not refused, and a psql can look in while debugging.
 *
 * PGlite checks no password, and any local user can reach a loopback port: pglite-socket listens
 * on a socket path in a directory only this user can open, and the loopback port is a gate that
 * asks for a password generated at each start (pg-password-gate.ts), carried in `url`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { tryLockFile } from './lock-file.ts';
import { startPasswordGate } from './pg-password-gate.ts';

export interface EmbeddedPostgresOptions {
  /** Where the database persists; in memory (gone at stop) when absent. */
  dataDir?: string;
  /** TCP port on 127.0.0.1; a free one when absent. */
  port?: number;
}

export interface EmbeddedPostgres {
  /** postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres, the password generated at start. */
  url: string;
  port: number;
  /** The pg pool size to use against it: one connection (see the module comment). */
  poolSize: 1;
  /** Closes client connections, the listener and the database (flushing it to dataDir). */
  stop(): Promise<void>;
}

/** Headroom for reconnects and a debugging session, not for concurrency. */
const CONNECTION_SLOTS = 8;

export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedPostgres> {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  let releaseLock = () => {};
  if (dataDir !== undefined) {
    mkdirSync(dataDir, { recursive: true });
    releaseLock = lockDataDir(dataDir);
  }
  let db: PGlite | undefined;
  // mkdtemp makes the directory 0700: only this user reaches the socket inside.
  const socketDir = mkdtempSync(join(tmpdir(), 'observatory-pg-'));
  const removeSocketDir = () => rmSync(socketDir, { recursive: true, force: true });
  try {
    db = await PGlite.create(dataDir === undefined ? {} : { dataDir });
    const upstreamPath = join(socketDir, '.s.PGSQL');
    const server = new PGLiteSocketServer({ db, path: upstreamPath, maxConnections: CONNECTION_SLOTS });
    await server.start();
    const password = randomBytes(24).toString('base64url');
    // Port 0 lets the kernel choose at bind time, so no other process can take it in between.
    const gate = await startPasswordGate({
      host: '127.0.0.1',
      port: options.port ?? 0,
      password,
      upstreamPath,
    });
    const opened = db;
    let stopped: Promise<void> | undefined;
    return {
      url: `postgres://postgres:${password}@127.0.0.1:${gate.port}/postgres`,
      port: gate.port,
      poolSize: 1,
      stop: () => {
        stopped ??= (async () => {
          try {
            await gate.close();
            await server.stop();
            await opened.close();
          } finally {
            removeSocketDir();
            releaseLock();
          }
        })();
        return stopped;
      },
    };
  } catch (err) {
    await db?.close().catch(() => {});
    removeSocketDir();
    releaseLock();
    throw err;
  }
}

/** Data directories opened in this process (the lock file only tells processes apart). */
const openHere = new Set<string>();

/**
 * PGlite does not lock its data directory: two processes opened the same one side by side, each
 * writing as if alone. A lock file next to the directory, holding our pid, refuses a second opener
 * while the holder lives; a holder that died (no process with that pid) leaves a stale lock we take.
 */
function lockDataDir(dataDir: string): () => void {
  const lockPath = `${dataDir}.lock`;
  if (openHere.has(dataDir)) throw new Error(`${dataDir} is already open in this process`);
  const holder = tryLockFile(lockPath);
  if (holder !== undefined)
    throw new Error(`${dataDir} is in use by process ${holder} (lock file ${lockPath})`);
  openHere.add(dataDir);
  const release = () => {
    openHere.delete(dataDir);
    process.removeListener('exit', release);
    rmSync(lockPath, { force: true });
  };
  // Exiting without stop() must not leave a lock that names a pid the system may reuse.
  process.on('exit', release);
  return release;
}
