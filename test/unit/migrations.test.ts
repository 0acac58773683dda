import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION, RELEASE_3_SCHEMA_VERSION } from '../../server/contract/schema-versions.ts';
import { BACKFILL_CHAIN } from '../../server/features/backfill/chain.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { EVENTS } from '../../server/platform/migrations/analytics/tables.ts';
import { coreViewSelect, migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import {
  RELATIONAL_MIGRATIONS,
  relationalMigrationsFor,
} from '../../server/platform/migrations/relational/versions.ts';

const CLUSTER = { cluster: true, clusterName: 'default' };

describe('analytics migrations', () => {
  it('number release 3 up to 37 and version 4 up to 47, densely, as the contract says', () => {
    expect(RELEASE_3_SCHEMA_VERSION).toBe(37);
    expect(LATEST_SCHEMA_VERSION).toBe(47);
    expect(migrationsFor('3').map((m) => m.version)).toEqual(Array.from({ length: 37 }, (_, i) => i + 1));
    expect(migrationsFor('4').map((m) => m.version)).toEqual(Array.from({ length: 47 }, (_, i) => i + 1));
  });

  it('version 4 adds staging, both events tables, the view, attribution, n-gram index, the three drops and the GenAI metrics', () => {
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
      'create_genai_metrics',
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
    const versions = RELATIONAL_MIGRATIONS.map((m) => m.version);
    expect(versions).toEqual(versions.map((_, i) => i + 1));
    for (const m of RELATIONAL_MIGRATIONS) expect(m.down.trim()).not.toBe('');
  });
  it('release 3 applies its own four and the relational resources both releases share', () => {
    // 5-7 are version 4's own (the backfill rows, the dropped tracing tables); every later one is shared.
    const release4Only = new Set([5, 6, 7]);
    expect(relationalMigrationsFor('3').map((m) => m.version)).toEqual(
      RELATIONAL_MIGRATIONS.map((m) => m.version).filter((v) => !release4Only.has(v)),
    );
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

  // What every analytics migration renders, up and down, single-node and clustered: the column
  // lists and builders they are rendered from may be reorganized, never the text databases applied.
  const renderedAnalytics = (m: ReturnType<typeof migrationsFor>[number]) =>
    sha256(JSON.stringify([SINGLE_NODE, CLUSTER].map((d) => [m.up(d), m.down(d)]))).slice(0, 16);
  it.each([
    [1, 'create_traces', 'feb4ad8bb1f507f9'],
    [2, 'create_observations', '2380b37769af504b'],
    [3, 'create_scores', '552679bce425bfb8'],
    [4, 'traces_add_idx_id', '2c2d77a1f697bf04'],
    [5, 'observations_add_idx_id', '1497ac6e534d00d5'],
    [6, 'observations_add_idx_trace_id', '646deb2ec7dc1755'],
    [7, 'scores_add_idx_id', 'f17292888b17f096'],
    [8, 'traces_add_environment', 'd6461466d5c732c5'],
    [9, 'observations_add_environment', '575b53c4fdc80fee'],
    [10, 'scores_add_environment', '731fd8ea706b672f'],
    [11, 'scores_add_author_and_config', 'b3165b6df97c4900'],
    [12, 'scores_add_data_type', 'a7c05c791cc40496'],
    [13, 'scores_add_queue', '7538e1a44f55715b'],
    [14, 'traces_add_idx_metadata_keys', '380b09be7f34d4d7'],
    [15, 'traces_add_idx_user_id', '4be23fcc3d733fae'],
    [16, 'traces_add_idx_session_id', '31a9457df4caa587'],
    [17, 'scores_add_metadata', 'acdec2348678e60b'],
    [18, 'create_event_log', '700cb6f295b06184'],
    [19, 'scores_add_session_and_run', 'a712da3d07fea95c'],
    [20, 'create_project_environments', '23a96a39142a6919'],
    [21, 'create_project_environments_views', 'f8cd0de5ba9ccf42'],
    [22, 'create_dataset_run_items', '85d7ef1e9a97255e'],
    [23, 'observations_add_idx_metadata_keys', '3244899393bdf520'],
    [24, 'traces_add_idx_created_at', '9d8f4005cba15167'],
    [25, 'observations_add_idx_created_at', '4c85964ef1b9cc29'],
    [26, 'scores_add_idx_created_at', '10c2f87c057aff77'],
    [27, 'create_dataset_run_items_rmt', '2ceea90267e1b57c'],
    [28, 'dataset_run_items_rmt_add_idx_trace_id', '2b51c11d659ad286'],
    [29, 'dataset_run_items_rmt_add_item_version', '39c1edc5579e7d96'],
    [30, 'scores_add_execution_trace', 'aa799cf9a2406f31'],
    [31, 'scores_add_idx_project_trace_observation', '2fc95acc0515990a'],
    [32, 'scores_add_idx_project_session', '8af88b2e14a4e357'],
    [33, 'scores_add_idx_project_dataset_run', '8bde125766bc68f6'],
    [34, 'scores_add_long_string', 'f68316d15e747846'],
    [35, 'observations_add_pricing_tier', 'd53a665cf8e41bdc'],
    [36, 'observations_add_tools', '1e808edeb6f206bf'],
    [37, 'scores_add_attribution', '29aa11cef7ee9e50'],
    [38, 'create_observations_batch_staging', '6fda4dfd90427bb1'],
    [39, 'create_events_full', '114babd66fc7f246'],
    [40, 'create_events_core', 'd1a2a8dade26c9dc'],
    [41, 'create_events_core_mv', '92cd4a6d2f806ea4'],
    [42, 'add_events_ingestion_attribution_columns', '6edffd4d2ca2a898'],
    [43, 'add_events_metadata_ngram_index', 'cd921e2444e0fc4f'],
    [44, 'drop_event_log', 'a89ff60651fc3c3c'],
    [45, 'drop_project_environments', '2a6e56628b4dfcf3'],
    [46, 'drop_dataset_run_items', '427bcad6fbf838ab'],
    [47, 'create_genai_metrics', '5c6192c644f00f09'],
  ] as const)(
    'analytics version %i (%s) renders the statements databases applied, byte for byte',
    (version, name, hash) => {
      const m = migrationsFor('4')[version - 1]!;
      expect([m.version, m.name, renderedAnalytics(m)]).toEqual([version, name, hash]);
    },
  );

  it('release 3 renders the same first 37 analytics migrations as version 4', () => {
    expect(migrationsFor('3').map(renderedAnalytics)).toEqual(
      migrationsFor('4').slice(0, 37).map(renderedAnalytics),
    );
  });

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
