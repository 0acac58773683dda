import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKFILL_CHAIN } from '../../server/backfill/chain.ts';
import { LATEST_SCHEMA_VERSION, RELEASE_3_SCHEMA_VERSION } from '../../server/contract/schema-versions.ts';
import { SINGLE_NODE } from '../../server/migrations/analytics/dialect.ts';
import { EVENTS } from '../../server/migrations/analytics/tables.ts';
import { coreViewSelect, migrationsFor } from '../../server/migrations/analytics/versions.ts';
import {
  RELATIONAL_MIGRATIONS,
  relationalMigrationsFor,
} from '../../server/migrations/relational/versions.ts';

const CLUSTER = { cluster: true, clusterName: 'default' };

describe('analytics migrations', () => {
  it('number release 3 up to 37 and version 4 up to 46, densely, as the contract says', () => {
    expect(RELEASE_3_SCHEMA_VERSION).toBe(37);
    expect(LATEST_SCHEMA_VERSION).toBe(46);
    expect(migrationsFor('3').map((m) => m.version)).toEqual(Array.from({ length: 37 }, (_, i) => i + 1));
    expect(migrationsFor('4').map((m) => m.version)).toEqual(Array.from({ length: 46 }, (_, i) => i + 1));
  });

  it('version 4 adds staging, both events tables, the view, attribution, n-gram index and the three drops', () => {
    expect(
      migrationsFor('4')
        .slice(37)
        .map((m) => m.name),
    ).toEqual([
      'create_observations_batch_staging',
      'create_events_full',
      'create_events_core',
      'create_events_core_mv',
      'add_events_ingestion_attribution_columns',
      'add_events_metadata_ngram_index',
      'drop_event_log',
      'drop_project_environments',
      'drop_dataset_run_items',
    ]);
  });

  it.each(migrationsFor('4').map((m) => [m.version, m] as const))(
    'version %i is idempotent both ways',
    (_, m) => {
      for (const sql of [...m.up(SINGLE_NODE), ...m.down(SINGLE_NODE)]) {
        expect(sql).toMatch(/IF (NOT )?EXISTS|MODIFY QUERY/);
      }
      expect(m.down(SINGLE_NODE).length).toBeGreaterThan(0);
    },
  );

  it('renders ON CLUSTER and replicated engines on clustered deployments', () => {
    for (const m of migrationsFor('4')) {
      for (const sql of [...m.up(CLUSTER), ...m.down(CLUSTER)]) {
        expect(sql).toMatch(
          /^(CREATE|ALTER|DROP) (MATERIALIZED VIEW|TABLE|VIEW) (IF (NOT )?EXISTS )?\w+ ON CLUSTER default/,
        );
        expect(sql).not.toMatch(/ENGINE = (Replacing)?MergeTree/);
      }
    }
    const staging = migrationsFor('4')[37]!.up(CLUSTER)[0]!;
    expect(staging).toContain('ENGINE = ReplicatedReplacingMergeTree(event_ts, is_deleted)');
    expect(migrationsFor('4')[37]!.up(SINGLE_NODE)[0]).not.toContain('ON CLUSTER');
  });

  it('stages in 3-minute partitions kept 48 hours', () => {
    const sql = migrationsFor('4')[37]!.up(SINGLE_NODE)[0]!;
    expect(sql).toContain('PARTITION BY toStartOfInterval(s3_first_seen_timestamp, INTERVAL 3 MINUTE)');
    expect(sql).toContain('TTL toDateTime(s3_first_seen_timestamp) + INTERVAL 48 HOUR');
  });

  it('the core view truncates input, output and metadata values and copies every other column', () => {
    const select = coreViewSelect(EVENTS);
    expect(select).toContain('leftUTF8(input, 200) AS input');
    expect(select).toContain('leftUTF8(output, 200) AS output');
    expect(select).toContain('arrayMap(v -> leftUTF8(v, 200), metadata_values) AS metadata_values');
    expect(select).not.toMatch(/\bcalculated_total_cost\b|\binput_length\b|\btotal_cost\b/);
    expect(select).toMatch(/\bmetadata_names,/);
  });
});

describe('relational migrations', () => {
  it('are numbered densely, each with a down step', () => {
    expect(RELATIONAL_MIGRATIONS.map((m) => m.version)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
      29,
    ]);
    for (const m of RELATIONAL_MIGRATIONS) expect(m.down.trim()).not.toBe('');
  });
  it('release 3 applies its own four and the relational resources both releases share', () => {
    expect(relationalMigrationsFor('3').map((m) => m.version)).toEqual([
      1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
    ]);
    expect(relationalMigrationsFor('4')).toEqual(RELATIONAL_MIGRATIONS);
  });
  it('version 4 inserts the five backfill rows with their gates and drops the relational tracing tables', () => {
    const chain = RELATIONAL_MIGRATIONS[4]!.up;
    expect(chain.match(/INSERT INTO background_migrations/g)).toHaveLength(5);
    expect(chain).toContain('SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES');
    expect(RELATIONAL_MIGRATIONS[5]!.up).toContain(
      'DROP TABLE IF EXISTS dataset_run_items, scores, observations, traces',
    );
  });
});

describe('applied migrations are frozen', () => {
  const v5 = RELATIONAL_MIGRATIONS.find((m) => m.version === 5)!;
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  it('version 5 (the backfill chain rows) is the text databases applied, byte for byte', () => {
    expect(sha256(v5.up)).toBe('00d78426e175608c7139e466835b9a44a3429a7604d9744ed785f2dbf1395852');
    expect(sha256(v5.down)).toBe('abd5a75c89c036ca31f917d32aff50b105e786442be0eeb7cedca07c54e2713e');
  });

  it('version 5 inserts the row of every step of the chain the backfill runs', () => {
    for (const s of BACKFILL_CHAIN) {
      expect(v5.up).toContain(
        `VALUES ('${s.id}', '${s.name}', '${s.script}', '${JSON.stringify({ envGate: s.envGate })}')`,
      );
      expect(v5.down).toContain(`'${s.name}'`);
    }
  });
});
