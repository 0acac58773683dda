/** Opens the datastore clients a process needs from its configuration, and closes them. */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { ServiceConfig } from '../config/env.ts';
import { createAnalyticsClient } from '../datastores/clickhouse.ts';
import { createPool } from '../datastores/postgres.ts';

export interface Datastores {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  close(): Promise<void>;
}

export function openDatastores(config: ServiceConfig): Datastores {
  const pool = createPool(config.databaseUrl!);
  const analytics = createAnalyticsClient(config.clickhouse);
  return {
    pool,
    analytics,
    async close() {
      await Promise.allSettled([pool.end(), analytics.close()]);
    },
  };
}
