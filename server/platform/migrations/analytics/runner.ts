/**
 * Applies and rewinds the analytics migrations and reports the schema version. The version is
 * kept in `schema_migrations` (one row per change; the newest row by `sequence` is current). A
 * version is marked dirty before its statements run and clean after; every statement is
 * idempotent, so a dirty version left by a killed process is simply applied again.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { createTable } from './ddl.ts';
import type { Dialect } from './dialect.ts';
import type { Migration } from './versions.ts';

export class SchemaAheadError extends Error {
  override name = 'SchemaAheadError';
}

export interface SchemaState {
  version: number;
  dirty: boolean;
}

export type MigrationLog = (line: string) => void;

export class AnalyticsMigrator {
  readonly #client: ClickHouseClient;
  readonly #dialect: Dialect;
  readonly #migrations: Migration[];
  #sequence = 0;

  constructor(client: ClickHouseClient, dialect: Dialect, migrations: Migration[]) {
    this.#client = client;
    this.#dialect = dialect;
    this.#migrations = migrations;
  }

  get latestKnown(): number {
    return this.#migrations.at(-1)?.version ?? 0;
  }

  async #ensureTable(): Promise<void> {
    await this.#client.command({
      query: createTable(
        this.#dialect,
        'schema_migrations',
        [
          { name: 'version', type: 'Int64' },
          { name: 'dirty', type: 'UInt8' },
          { name: 'sequence', type: 'UInt64' },
        ],
        { engine: 'MergeTree', orderBy: 'sequence' },
      ),
    });
  }

  async state(): Promise<SchemaState> {
    await this.#ensureTable();
    const rs = await this.#client.query({
      query:
        'SELECT argMax(version, sequence) AS version, argMax(dirty, sequence) AS dirty, count() AS n FROM schema_migrations',
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{ version: string | number; dirty: number; n: string | number }>();
    if (!row || Number(row.n) === 0) return { version: 0, dirty: false };
    return { version: Number(row.version), dirty: Number(row.dirty) === 1 };
  }

  async #record(version: number, dirty: boolean): Promise<void> {
    // Wall-clock microseconds plus a local counter keep the order even within one millisecond.
    const sequence = Date.now() * 1000 + (this.#sequence++ % 1000);
    await this.#client.insert({
      table: 'schema_migrations',
      values: [{ version, dirty: dirty ? 1 : 0, sequence }],
      format: 'JSONEachRow',
    });
  }

  /** Refuses to run on a database whose schema is newer than this build knows. */
  async assertKnown(): Promise<SchemaState> {
    const s = await this.state();
    if (s.version > this.latestKnown) {
      throw new SchemaAheadError(`no migration was found for version ${s.version}`);
    }
    return s;
  }

  async #run(statements: string[]): Promise<void> {
    for (const query of statements) await this.#client.command({ query });
  }

  /** Applies pending migrations up to `to` (default: all). Returns the versions applied. */
  async up(to = this.latestKnown, log: MigrationLog = () => {}): Promise<number[]> {
    if (to > this.latestKnown) throw new SchemaAheadError(`no migration was found for version ${to}`);
    const s = await this.assertKnown();
    const from = s.dirty ? s.version - 1 : s.version;
    const applied: number[] = [];
    for (const m of this.#migrations) {
      if (m.version <= from || m.version > to) continue;
      await this.#record(m.version, true);
      await this.#run(m.up(this.#dialect));
      await this.#record(m.version, false);
      log(`applied ${m.version} ${m.name}`);
      applied.push(m.version);
    }
    return applied;
  }

  /** Rewinds to schema version `to` by running down steps newest first. Returns versions rewound. */
  async down(to: number, log: MigrationLog = () => {}): Promise<number[]> {
    const s = await this.assertKnown();
    const rewound: number[] = [];
    for (const m of [...this.#migrations].reverse()) {
      if (m.version > s.version || m.version <= to) continue;
      await this.#record(m.version, true);
      await this.#run(m.down(this.#dialect));
      await this.#record(m.version - 1, false);
      log(`rewound ${m.version} ${m.name}`);
      rewound.push(m.version);
    }
    return rewound;
  }
}
