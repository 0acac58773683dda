/** Opens the datastore clients a process needs from its configuration, and closes them. */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { AnalyticsRole } from '../../contract/env.ts';
import type { ServiceConfig } from '../../kernel/config/env.ts';
import { createAnalyticsClient } from '../../platform/datastores/clickhouse.ts';
import { createPool } from '../../platform/datastores/postgres.ts';
import { statementBounds } from '../../platform/datastores/statement-bounds.ts';

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
