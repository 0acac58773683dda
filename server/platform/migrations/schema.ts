/** Schema management for a process: the migrators of both stores for this release's migrations. */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { ServiceConfig } from '../../kernel/config/env.ts';
import type { Dialect } from './analytics/dialect.ts';
import { AnalyticsMigrator } from './analytics/runner.ts';
import { migrationsFor } from './analytics/versions.ts';
import { RelationalMigrator } from './relational/runner.ts';
import { relationalMigrationsFor } from './relational/versions.ts';

export function dialectOf(config: ServiceConfig): Dialect {
  return { cluster: config.clickhouse.clusterEnabled, clusterName: config.clickhouse.clusterName };
}

export function migratorsFor(config: ServiceConfig, pool: pg.Pool, analytics: ClickHouseClient) {
  return {
    relational: new RelationalMigrator(pool, relationalMigrationsFor(config.mode.release)),
    analytics: new AnalyticsMigrator(analytics, dialectOf(config), migrationsFor(config.mode.release)),
  };
}
