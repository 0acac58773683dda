/**
 * The historic backfill chain: five background migrations, each gated by an environment variable
 * and each starting only after its predecessor finished. Names and ids follow the reference so a
 * database migrated by either carries the same rows.
 */
import { ENV } from '../../contract/env.ts';

export interface ChainStep {
  step: 1 | 2 | 3 | 4 | 5;
  id: string;
  name: string;
  script: string;
  envGate: string;
}

export const BACKFILL_CHAIN: readonly ChainStep[] = [
  {
    step: 1,
    id: '8e1f4a2b-5c63-4d8e-9a47-1b2f3c4d5e6f',
    name: '20260701_v4_step_1_create_root_spans_from_traces',
    script: 'createRootSpansFromTraces',
    envGate: ENV.enableHistoricBackfill,
  },
  {
    step: 2,
    id: '9c2d5a4f-7b8e-4f6a-a91c-3e5d7f8a2b1c',
    name: '20260701_v4_step_2_rewrite_observations_to_pid_tid_sorting',
    script: 'rewriteObservationsToPidTidSorting',
    envGate: ENV.enableHistoricBackfill,
  },
  {
    step: 3,
    id: '7a3f8d6e-2c91-4b5e-8d72-f4a5b6c7d8e9',
    name: '20260701_v4_step_3_backfill_events_full_from_observations',
    script: 'backfillEventsFullFromObservations',
    envGate: ENV.enableHistoricBackfill,
  },
  {
    step: 4,
    id: '9d4f8a12-7b35-4e6c-9f48-a2b3c4d5e6f7',
    name: '20260701_v4_step_4_backfill_events_full_from_dataset_run_items',
    script: 'backfillEventsFullFromDatasetRunItems',
    envGate: ENV.enableHistoricBackfill,
  },
  {
    step: 5,
    id: 'b3f1c5d8-9e47-4a26-8b3f-5c6d7e8f9a01',
    name: '20260701_v4_step_5_drop_pid_tid_sorting_tables',
    script: 'dropPidTidSortingTables',
    envGate: ENV.dropPidTidSortingTables,
  },
];
