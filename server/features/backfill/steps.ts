/** What each backfill step executes: its chunked source table and statements (pure). */
import type { Dialect } from '../../platform/migrations/analytics/dialect.ts';
import type { Chunk, KeyColumn } from './chunks.ts';
import {
  type ChunkQuery,
  copyToScratchStatement,
  createScratchTable,
  dropScratchTable,
  eventsFromObservationsStatement,
  experimentEnrichmentStatement,
  OBSERVATIONS_KEY,
  RUN_ITEMS_KEY,
  rootSpansStatement,
  SCRATCH_KEY,
  SCRATCH_TABLE,
  TRACES_KEY,
} from './sql.ts';

/** The table a step writes and how to recognise a row it wrote. */
export interface StepOutput {
  table: string;
  /** The column holding the row's id (`span_id`, or `id` in the scratch table). */
  idColumn: string;
  /** A condition only rows this step wrote meet. */
  written: string;
}

const BACKFILLED = "source IN ('otel-backfill', 'ingestion-api-backfill')";

export interface StepPlan {
  /** Table whose partitions and key ranges are the chunks; none for a single-statement step. */
  source?: { table: string; key: readonly KeyColumn[] };
  /** Runs once per chunk. */
  chunkStatement?: (chunk: Chunk) => ChunkQuery;
  /** Idempotent statements before the chunks. */
  before?: (d: Dialect) => string[];
  /** Idempotent statements after the last chunk. */
  after?: (d: Dialect) => string[];
  /** Tables that must exist before the step starts. */
  requires: string[];
  /** What the step writes, which a finished step proves still exists (proof.ts). */
  output?: StepOutput;
  /** The later step that drops the output on purpose. */
  droppedBy?: number;
}

export function planOf(step: number): StepPlan {
  switch (step) {
    case 1:
      return {
        source: { table: 'traces', key: TRACES_KEY },
        chunkStatement: rootSpansStatement,
        requires: ['traces', 'events_full'],
        output: {
          table: 'events_full',
          idColumn: 'span_id',
          written: `${BACKFILLED} AND startsWith(span_id, 't-')`,
        },
      };
    case 2:
      return {
        source: { table: 'observations', key: OBSERVATIONS_KEY },
        chunkStatement: copyToScratchStatement,
        before: (d) => [createScratchTable(d)],
        requires: ['observations'],
        output: { table: SCRATCH_TABLE, idColumn: 'id', written: '1' },
        droppedBy: 5,
      };
    case 3:
      return {
        source: { table: SCRATCH_TABLE, key: SCRATCH_KEY },
        chunkStatement: eventsFromObservationsStatement,
        requires: [SCRATCH_TABLE, 'traces', 'events_full'],
        output: {
          table: 'events_full',
          idColumn: 'span_id',
          written: `${BACKFILLED} AND NOT startsWith(span_id, 't-')`,
        },
      };
    case 4:
      return {
        source: { table: 'dataset_run_items_rmt', key: RUN_ITEMS_KEY },
        chunkStatement: experimentEnrichmentStatement,
        requires: ['dataset_run_items_rmt', 'events_full'],
        output: { table: 'events_full', idColumn: 'span_id', written: "experiment_id != ''" },
      };
    case 5:
      return { after: (d) => [dropScratchTable(d)], requires: [] };
    default:
      throw new RangeError(`no backfill step ${step}`);
  }
}
