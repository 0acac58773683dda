/** Opens the datastore clients a process needs from its configuration, and closes them. */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { ServiceConfig } from '../config/env.ts';
import type { AnalyticsRole } from '../contract/env.ts';
import { createAnalyticsClient } from '../datastores/clickhouse.ts';
import { createPool } from '../datastores/postgres.ts';
import { statementBounds } from '../datastores/statement-bounds.ts';

export interface Datastores {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  close(): Promise<void>;
}

/** `role` picks the bounds of the analytics statements (statement-bounds.ts). */
export function openDatastores(config: ServiceConfig, role: AnalyticsRole): Datastores {
  const pool = createPool(config.databaseUrl!);
  const analytics = createAnalyticsClient(config.clickhouse, statementBounds(role, config.analyticsTimeouts));
  return {
    pool,
    analytics,
    async close() {
      await Promise.allSettled([pool.end(), analytics.close()]);
    },
  };
}
