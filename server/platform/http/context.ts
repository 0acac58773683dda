/**
 * What every route plugin may take from the process. A feature's routes declare the context they
 * need as an interface extending this one (`DatasetsRouteContext`); the web's `WebContext` extends
 * them all, so the process is checked to provide what each plugin it registers needs.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { ServiceConfig } from '../../kernel/config/env.ts';

export interface RouteContext {
  config: ServiceConfig;
  pool: pg.Pool;
  analytics: ClickHouseClient;
}
