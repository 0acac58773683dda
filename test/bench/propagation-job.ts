/**
 * The worker's propagation job as the benches run it: in this process, alone (memory
 * coordination), silent, with the deployed defaults of window, grace and chunk size.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import pino from 'pino';
import { PropagationJob } from '../../server/app/worker/propagation/job.ts';
import { ENV_DEFAULTS } from '../../server/contract/env.ts';
import { TombstoneGuard } from '../../server/features/tombstones/record.ts';
import { memoryCoordination } from '../../server/platform/coordination/store.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';

export const benchPropagationJob = (analytics: ClickHouseClient, pool: pg.Pool) =>
  new PropagationJob({
    analytics,
    coordination: memoryCoordination(),
    log: pino({ level: 'silent' }),
    workerId: 'bench',
    intervalMs: 60_000,
    graceSeconds: 30,
    chunkRows: ENV_DEFAULTS.propagationChunkRows,
    tombstones: new TombstoneGuard(pool, { analytics, release: '4', dialect: SINGLE_NODE }),
  });
