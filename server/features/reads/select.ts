/** What every reader shares: running a built query, a page with its total, the text-index probe. */
import type { ClickHouseClient } from '@clickhouse/client';
import { pageMeta } from '../../platform/http/project-routes.ts';
import type { PagedQuery } from './legacy.ts';
import type { Query } from './sql.ts';

/** What a reader needs: the analytics store's client. */
export interface ReadContext {
  analytics: ClickHouseClient;
}

export type Row = Record<string, unknown>;

/** Numbers as JSON numbers (64-bit integers and decimals are quoted by default). */
const READ_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
} as const;

export async function select(ctx: ReadContext, query: Query): Promise<Row[]> {
  const rs = await ctx.analytics.query({
    query: query.sql,
    query_params: query.params,
    format: 'JSONEachRow',
    clickhouse_settings: { ...READ_SETTINGS, ...(query.settings ?? {}) } as never,
  });
  return rs.json<Row>();
}

const textIndexCache = new WeakMap<ReadContext, Promise<boolean>>();

/**
 * Whether `events_full` carries the input text index. Older stores or schemas without it still
 * answer full-text filters, through the scanning form of the same condition.
 */
export function hasTextIndex(ctx: ReadContext): Promise<boolean> {
  let cached = textIndexCache.get(ctx);
  if (!cached) {
    cached = select(ctx, {
      sql: `SELECT count() AS n FROM system.data_skipping_indices
            WHERE database = currentDatabase() AND table = 'events_full' AND name = 'idx_fts_input_low'`,
      params: {},
    })
      .then((rows) => Number(rows[0]?.['n'] ?? 0) > 0)
      .catch(() => false);
    textIndexCache.set(ctx, cached);
  }
  return cached;
}

/** A page and its total, run side by side. */
export async function runPaged(ctx: ReadContext, pq: PagedQuery, p: { page: number; limit: number }) {
  const [rows, count] = await Promise.all([select(ctx, pq.list), select(ctx, pq.count)]);
  return { rows, meta: pageMeta(p.page, p.limit, Number(count[0]?.['n'] ?? 0)) };
}
