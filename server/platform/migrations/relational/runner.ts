/**
 * Applies and rewinds the relational migrations. Each migration and its version row commit in one
 * transaction, so a killed process leaves either all of a migration or none of it. A session-level
 * advisory lock serializes concurrent migrators (several web pods starting at once). Versions this
 * build does not know are tolerated: the relational schema stays compatible across a rollback to
 * release 3 (the spec: "the relational schema needs no change").
 */
import type pg from 'pg';
import type { RelationalMigration } from './versions.ts';

const LOCK_KEY = 73_657_201; // arbitrary, fixed: identifies this migrator's advisory lock

export class RelationalMigrator {
  readonly #pool: pg.Pool;
  readonly #migrations: RelationalMigration[];

  constructor(pool: pg.Pool, migrations: RelationalMigration[]) {
    this.#pool = pool;
    this.#migrations = migrations;
  }

  get latestKnown(): number {
    return this.#migrations.at(-1)?.version ?? 0;
  }

  async #withLock<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
      return await fn(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
      client.release();
    }
  }

  static async #applied(c: pg.PoolClient): Promise<Set<number>> {
    const r = await c.query<{ version: number }>('SELECT version FROM schema_migrations');
    return new Set(r.rows.map((row) => row.version));
  }

  async version(): Promise<number> {
    return this.#withLock(async (c) => Math.max(0, ...(await RelationalMigrator.#applied(c))));
  }

  async up(to = this.latestKnown): Promise<number[]> {
    return this.#withLock(async (c) => {
      const applied = await RelationalMigrator.#applied(c);
      const done: number[] = [];
      for (const m of this.#migrations) {
        if (m.version > to || applied.has(m.version)) continue;
        await c.query('BEGIN');
        try {
          await c.query(m.up);
          await c.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK');
          throw new Error(`relational migration ${m.version} ${m.name} failed: ${(err as Error).message}`);
        }
        done.push(m.version);
      }
      return done;
    });
  }

  async down(to: number): Promise<number[]> {
    return this.#withLock(async (c) => {
      const applied = await RelationalMigrator.#applied(c);
      const done: number[] = [];
      for (const m of [...this.#migrations].reverse()) {
        if (m.version <= to || !applied.has(m.version)) continue;
        await c.query('BEGIN');
        try {
          await c.query(m.down);
          await c.query('DELETE FROM schema_migrations WHERE version = $1', [m.version]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK');
          throw new Error(`relational rewind of ${m.version} ${m.name} failed: ${(err as Error).message}`);
        }
        done.push(m.version);
      }
      return done;
    });
  }
}
