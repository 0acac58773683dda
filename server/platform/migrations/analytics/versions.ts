/**
 * The analytics schema as numbered migrations, each with an up and a down step. Versions 1-37
 * are the version 3 schema (37 is the last version 3 release's); 38-47 are version 4's. Pure: each
 * step renders statements for a Dialect; the runner executes them.
 */

import {
  addColumns,
  addIndex,
  createMaterializedView,
  createTable,
  dropColumns,
  dropIndex,
  dropTable,
  dropView,
  modifyViewQuery,
  type TableLayout,
} from './ddl.ts';
import { type Dialect, ident } from './dialect.ts';
import {
  ATTRIBUTION,
  CORE_TRUNCATION,
  type Column,
  DATASET_RUN_ITEMS_LEGACY,
  DATASET_RUN_ITEMS_RMT,
  ENVIRONMENT,
  EVENT_LOG,
  EVENTS,
  GENAI_METRICS,
  insertable,
  OBSERVATIONS,
  OBSERVATIONS_PRICING_TIER,
  OBSERVATIONS_TOOLS,
  OBSERVATIONS_V1,
  PROJECT_ENVIRONMENTS,
  SCORES_ADDED,
  SCORES_V1,
  TRACES_V1,
} from './tables.ts';

export interface Migration {
  version: number;
  name: string;
  up: (d: Dialect) => string[];
  down: (d: Dialect) => string[];
}

type Step = Omit<Migration, 'version'>;

const RMT = { engine: 'ReplacingMergeTree', engineArgs: 'event_ts, is_deleted' } as const;

const rmtVersion = DATASET_RUN_ITEMS_RMT.filter((c) => c.name === 'dataset_item_version');
const rmtBase = DATASET_RUN_ITEMS_RMT.filter((c) => c.name !== 'dataset_item_version');

const LAYOUT = {
  traces: {
    ...RMT,
    partitionBy: 'toYYYYMM(timestamp)',
    primaryKey: '(project_id, toDate(timestamp))',
    orderBy: '(project_id, toDate(timestamp), id)',
  },
  observations: {
    ...RMT,
    partitionBy: 'toYYYYMM(start_time)',
    primaryKey: '(project_id, type, toDate(start_time))',
    orderBy: '(project_id, type, toDate(start_time), id)',
  },
  scores: {
    ...RMT,
    partitionBy: 'toYYYYMM(timestamp)',
    primaryKey: '(project_id, toDate(timestamp), name)',
    orderBy: '(project_id, toDate(timestamp), name, id)',
  },
  eventLog: { engine: 'MergeTree', orderBy: '(project_id, entity_type, entity_id)' },
  projectEnvironments: {
    engine: 'ReplacingMergeTree',
    engineArgs: 'created_at',
    orderBy: '(project_id, environment)',
  },
  datasetRunItems: { engine: 'MergeTree', orderBy: '(project_id, dataset_id, dataset_run_id, id)' },
  datasetRunItemsRmt: { ...RMT, orderBy: '(project_id, dataset_id, dataset_run_id, id)' },
} satisfies Record<string, TableLayout>;

const table = (name: string, cols: Column[], layout: TableLayout): Step => ({
  name: `create_${name}`,
  up: (d) => [createTable(d, name, cols, layout)],
  down: (d) => [dropTable(d, name)],
});

const columns = (tableName: string, label: string, cols: Column[]): Step => ({
  name: `${tableName}_add_${label}`,
  up: (d) => [addColumns(d, tableName, cols)],
  down: (d) => [dropColumns(d, tableName, cols)],
});

/** `definition` starts with the index name. */
const index = (tableName: string, definition: string): Step => {
  const name = definition.split(' ')[0]!;
  return {
    name: `${tableName}_add_${name}`,
    up: (d) => [addIndex(d, tableName, definition)],
    down: (d) => [dropIndex(d, tableName, name)],
  };
};

const ENV_SOURCES = ['traces', 'observations', 'scores'] as const;
const envViewSelect = (source: string) => `SELECT project_id, environment, created_at FROM ${ident(source)}`;
const projectEnvironments = (d: Dialect) => [
  createTable(d, 'project_environments', PROJECT_ENVIRONMENTS, LAYOUT.projectEnvironments),
];
const projectEnvironmentViews = (d: Dialect) =>
  ENV_SOURCES.map((s) =>
    createMaterializedView(d, `project_environments_${s}_mv`, 'project_environments', envViewSelect(s)),
  );
const dropProjectEnvironments = (d: Dialect) => [
  ...ENV_SOURCES.map((s) => dropView(d, `project_environments_${s}_mv`)),
  dropTable(d, 'project_environments'),
];

const RELEASE_3: Step[] = [
  table('traces', TRACES_V1, LAYOUT.traces),
  table('observations', OBSERVATIONS_V1, LAYOUT.observations),
  table('scores', SCORES_V1, LAYOUT.scores),
  index('traces', 'idx_id id TYPE bloom_filter(0.001) GRANULARITY 1'),
  index('observations', 'idx_id id TYPE bloom_filter(0.001) GRANULARITY 1'),
  index('observations', 'idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1'),
  index('scores', 'idx_id id TYPE bloom_filter(0.001) GRANULARITY 1'),
  columns('traces', 'environment', [ENVIRONMENT]),
  columns('observations', 'environment', [ENVIRONMENT]),
  columns('scores', 'environment', [ENVIRONMENT]),
  columns('scores', 'author_and_config', SCORES_ADDED['author_and_config']!),
  columns('scores', 'data_type', SCORES_ADDED['data_type']!),
  columns('scores', 'queue', SCORES_ADDED['queue']!),
  index('traces', 'idx_metadata_keys mapKeys(metadata) TYPE bloom_filter(0.01) GRANULARITY 1'),
  index('traces', 'idx_user_id user_id TYPE bloom_filter(0.001) GRANULARITY 1'),
  index('traces', 'idx_session_id session_id TYPE bloom_filter(0.001) GRANULARITY 1'),
  columns('scores', 'metadata', SCORES_ADDED['metadata']!),
  table('event_log', EVENT_LOG, LAYOUT.eventLog),
  columns('scores', 'session_and_run', SCORES_ADDED['session_and_run']!),
  {
    name: 'create_project_environments',
    up: projectEnvironments,
    down: (d) => [dropTable(d, 'project_environments')],
  },
  {
    name: 'create_project_environments_views',
    up: projectEnvironmentViews,
    down: (d) => ENV_SOURCES.map((s) => dropView(d, `project_environments_${s}_mv`)),
  },
  table('dataset_run_items', DATASET_RUN_ITEMS_LEGACY, LAYOUT.datasetRunItems),
  index('observations', 'idx_metadata_keys mapKeys(metadata) TYPE bloom_filter(0.01) GRANULARITY 1'),
  index('traces', 'idx_created_at created_at TYPE minmax GRANULARITY 1'),
  index('observations', 'idx_created_at created_at TYPE minmax GRANULARITY 1'),
  index('scores', 'idx_created_at created_at TYPE minmax GRANULARITY 1'),
  table('dataset_run_items_rmt', rmtBase, LAYOUT.datasetRunItemsRmt),
  index('dataset_run_items_rmt', 'idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1'),
  columns('dataset_run_items_rmt', 'item_version', rmtVersion),
  columns('scores', 'execution_trace', SCORES_ADDED['execution_trace']!),
  index(
    'scores',
    'idx_project_trace_observation (project_id, trace_id, observation_id) TYPE bloom_filter(0.001) GRANULARITY 1',
  ),
  index('scores', 'idx_project_session (project_id, session_id) TYPE bloom_filter(0.001) GRANULARITY 1'),
  index(
    'scores',
    'idx_project_dataset_run (project_id, dataset_run_id) TYPE bloom_filter(0.001) GRANULARITY 1',
  ),
  columns('scores', 'long_string', SCORES_ADDED['long_string']!),
  columns('observations', 'pricing_tier', OBSERVATIONS_PRICING_TIER),
  columns('observations', 'tools', OBSERVATIONS_TOOLS),
  columns('scores', 'attribution', ATTRIBUTION),
];

const STAGING_BASE: Column[] = [...OBSERVATIONS, { name: 's3_first_seen_timestamp', type: 'DateTime64(3)' }];

const EVENTS_LAYOUT: TableLayout = {
  ...RMT,
  partitionBy: 'toYYYYMM(start_time)',
  primaryKey: '(project_id, toStartOfMinute(start_time), xxHash32(trace_id))',
  orderBy: '(project_id, toStartOfMinute(start_time), xxHash32(trace_id), span_id, start_time)',
  sampleBy: 'xxHash32(trace_id)',
};

const bloom = (col: string, g = 1) => `idx_${col} ${col} TYPE bloom_filter(0.01) GRANULARITY ${g}`;
const text = (name: string, expr: string) => `${name} ${expr} TYPE text(tokenizer = splitByNonAlpha)`;
const COMMON_EVENT_INDEXES = [
  bloom('span_id'),
  bloom('trace_id'),
  bloom('user_id'),
  bloom('session_id'),
  'idx_created_at created_at TYPE minmax GRANULARITY 1',
  'idx_updated_at updated_at TYPE minmax GRANULARITY 1',
  text('idx_fts_metadata_values', 'metadata_values'),
  text('idx_fts_metadata_names', 'metadata_names'),
];

/** `events_core` keeps input and output uncompressed (they are short after truncation). */
const coreColumns = (cols: Column[]): Column[] =>
  cols.map((c) => (c.name === 'input' || c.name === 'output' ? { name: c.name, type: c.type } : c));

const TRUNCATED = new Set(['input', 'output', 'metadata_values']);
/** The view's SELECT: every insertable column, with input, output and metadata values truncated. */
export function coreViewSelect(cols: readonly Column[]): string {
  const exprs = insertable(cols).map((name) => {
    if (!TRUNCATED.has(name)) return name;
    if (name === 'metadata_values') {
      return `arrayMap(v -> leftUTF8(v, ${CORE_TRUNCATION}), metadata_values) AS metadata_values`;
    }
    return `leftUTF8(${name}, ${CORE_TRUNCATION}) AS ${name}`;
  });
  return `SELECT\n  ${exprs.join(',\n  ')}\nFROM events_full`;
}

const EVENTS_WITH_ATTRIBUTION = [...EVENTS, ...ATTRIBUTION];
const NGRAM =
  'idx_ngram_metadata_values arrayStringConcat(metadata_values) TYPE ngrambf_v1(4, 32000, 3, 0) GRANULARITY 2';

const RELEASE_4: Step[] = [
  {
    name: 'create_observations_batch_staging',
    up: (d) => [
      createTable(d, 'observations_batch_staging', STAGING_BASE, {
        ...RMT,
        partitionBy: 'toStartOfInterval(s3_first_seen_timestamp, INTERVAL 3 MINUTE)',
        primaryKey: '(project_id, toDate(s3_first_seen_timestamp))',
        orderBy: '(project_id, toDate(s3_first_seen_timestamp), trace_id, id)',
        ttl: 'toDateTime(s3_first_seen_timestamp) + INTERVAL 48 HOUR',
        settings: 'ttl_only_drop_parts = 1',
      }),
    ],
    down: (d) => [dropTable(d, 'observations_batch_staging')],
  },
  {
    name: 'create_events_full',
    up: (d) => [
      createTable(d, 'events_full', EVENTS, {
        ...EVENTS_LAYOUT,
        indexes: [
          ...COMMON_EVENT_INDEXES,
          text('idx_fts_input_low', 'lower(input)'),
          text('idx_fts_output_low', 'lower(output)'),
        ],
        settings: [
          "index_granularity_bytes = '64Mi'",
          "merge_max_block_size_bytes = '64Mi'",
          'enable_block_number_column = 1',
          'enable_block_offset_column = 1',
          'enable_full_text_index = 1',
        ].join(', '),
      }),
    ],
    down: (d) => [dropTable(d, 'events_full')],
  },
  {
    name: 'create_events_core',
    up: (d) => [
      createTable(d, 'events_core', coreColumns(EVENTS), {
        ...EVENTS_LAYOUT,
        indexes: [
          ...COMMON_EVENT_INDEXES,
          bloom('provided_model_name', 2),
          bloom('experiment_id'),
          'idx_metadata_names metadata_names TYPE bloom_filter(0.01) GRANULARITY 1',
        ],
        settings:
          'enable_block_number_column = 1, enable_block_offset_column = 1, enable_full_text_index = 1',
      }),
    ],
    down: (d) => [dropTable(d, 'events_core')],
  },
  {
    name: 'create_events_core_mv',
    up: (d) => [createMaterializedView(d, 'events_core_mv', 'events_core', coreViewSelect(EVENTS))],
    down: (d) => [dropView(d, 'events_core_mv')],
  },
  {
    name: 'add_events_ingestion_attribution_columns',
    up: (d) => [
      addColumns(d, 'events_full', ATTRIBUTION),
      addColumns(d, 'events_core', ATTRIBUTION),
      addColumns(d, 'observations_batch_staging', ATTRIBUTION),
      modifyViewQuery(d, 'events_core_mv', coreViewSelect(EVENTS_WITH_ATTRIBUTION)),
    ],
    down: (d) => [
      modifyViewQuery(d, 'events_core_mv', coreViewSelect(EVENTS)),
      dropColumns(d, 'observations_batch_staging', ATTRIBUTION),
      dropColumns(d, 'events_core', ATTRIBUTION),
      dropColumns(d, 'events_full', ATTRIBUTION),
    ],
  },
  {
    name: 'add_events_metadata_ngram_index',
    up: (d) => [addIndex(d, 'events_full', NGRAM), addIndex(d, 'events_core', NGRAM)],
    down: (d) => [
      dropIndex(d, 'events_core', 'idx_ngram_metadata_values'),
      dropIndex(d, 'events_full', 'idx_ngram_metadata_values'),
    ],
  },
  {
    name: 'drop_event_log',
    up: (d) => [dropTable(d, 'event_log')],
    down: (d) => [createTable(d, 'event_log', EVENT_LOG, LAYOUT.eventLog)],
  },
  {
    name: 'drop_project_environments',
    up: dropProjectEnvironments,
    down: (d) => [...projectEnvironments(d), ...projectEnvironmentViews(d)],
  },
  {
    name: 'drop_dataset_run_items',
    up: (d) => [dropTable(d, 'dataset_run_items')],
    down: (d) => [createTable(d, 'dataset_run_items', DATASET_RUN_ITEMS_LEGACY, LAYOUT.datasetRunItems)],
  },
  // The OTel GenAI metrics (#40). Partitioned by start time, which a series' cumulative points share,
  // so the newest (by timestamp) replaces the others within one partition.
  table('genai_metrics', GENAI_METRICS, {
    engine: 'ReplacingMergeTree',
    engineArgs: 'timestamp',
    partitionBy: 'toYYYYMM(start_time)',
    orderBy: '(project_id, metric_name, series_id, start_time)',
  }),
];

/** Every migration a release knows, numbered from 1. */
export function migrationsFor(release: '3' | '4'): Migration[] {
  const steps = release === '3' ? RELEASE_3 : [...RELEASE_3, ...RELEASE_4];
  return steps.map((s, i) => ({ ...s, version: i + 1 }));
}
