/** What each backfill step executes: its chunked source table and statements (pure). */
import type { Dialect } from '../migrations/analytics/dialect.ts';
import {
  copyToScratchStatement,
  createScratchTable,
  dropScratchTable,
  eventsFromObservationsStatement,
  experimentEnrichmentStatement,
  rootSpansStatement,
  SCRATCH_TABLE,
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
  /** Table whose partitions are the chunks; none for a single-statement step. */
  source?: string;
  /** Runs once per chunk with {partition, bucket, buckets}. */
  chunkStatement?: string;
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
        source: 'traces',
        chunkStatement: rootSpansStatement(),
        requires: ['traces', 'events_full'],
        output: {
          table: 'events_full',
          idColumn: 'span_id',
          written: `${BACKFILLED} AND startsWith(span_id, 't-')`,
        },
      };
    case 2:
      return {
        source: 'observations',
        chunkStatement: copyToScratchStatement(),
        before: (d) => [createScratchTable(d)],
        requires: ['observations'],
        output: { table: SCRATCH_TABLE, idColumn: 'id', written: '1' },
        droppedBy: 5,
      };
    case 3:
      return {
        source: SCRATCH_TABLE,
        chunkStatement: eventsFromObservationsStatement(),
        requires: [SCRATCH_TABLE, 'traces', 'events_full'],
        output: {
          table: 'events_full',
          idColumn: 'span_id',
          written: `${BACKFILLED} AND NOT startsWith(span_id, 't-')`,
        },
      };
    case 4:
      return {
        source: 'dataset_run_items_rmt',
        chunkStatement: experimentEnrichmentStatement(),
        requires: ['dataset_run_items_rmt', 'events_full'],
        output: { table: 'events_full', idColumn: 'span_id', written: "experiment_id != ''" },
      };
    case 5:
      return { after: (d) => [dropScratchTable(d)], requires: [] };
    default:
      throw new RangeError(`no backfill step ${step}`);
  }
}

/** Splits a partition of `rows` rows into buckets of at most `chunkRows` rows (on average). */
export const bucketsFor = (rows: number, chunkRows: number): number =>
  Math.max(1, Math.ceil(rows / chunkRows));
