/** What every read route shares: running a built query, the mode gates, the text-index probe. */
import type { FastifyReply } from 'fastify';
import { behaviourOf } from '../../../contract/write-modes.ts';
import type { Query } from '../../../reads/sql.ts';
import type { WebContext } from '../../context.ts';
import { notInEventsOnly } from '../legacy-writes.ts';

export type Row = Record<string, unknown>;

/** Numbers as JSON numbers (64-bit integers and decimals are quoted by default). */
const READ_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
} as const;

export async function select(ctx: WebContext, query: Query): Promise<Row[]> {
  const rs = await ctx.analytics.query({
    query: query.sql,
    query_params: query.params,
    format: 'JSONEachRow',
    clickhouse_settings: { ...READ_SETTINGS, ...(query.settings ?? {}) } as never,
  });
  return rs.json<Row>();
}

const textIndexCache = new WeakMap<WebContext, Promise<boolean>>();

/**
 * Whether `events_full` carries the input text index. Older stores or schemas without it still
 * answer full-text filters, through the scanning form of the same condition.
 */
export function hasTextIndex(ctx: WebContext): Promise<boolean> {
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

/** Version 4 reads (observations v2, experiments): 404 unless the mode serves them. */
export function refuseUnlessV4(ctx: WebContext, reply: FastifyReply): boolean {
  if (behaviourOf(ctx.config.mode).servesV4Reads) return false;
  reply.code(404).send({
    message:
      'This endpoint is only available in a version 4 write mode (events_only, or dual with SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN=true).',
  });
  return true;
}

/** Metrics v2 additionally needs the events tables to be written (mode other than legacy). */
export function refuseUnlessMetricsV2(ctx: WebContext, reply: FastifyReply): boolean {
  if (refuseUnlessV4(ctx, reply)) return true;
  if (ctx.config.mode.writeMode !== 'legacy') return false;
  reply.code(404).send({ message: 'Metrics API v2 is not available in write mode legacy.' });
  return true;
}

/** Release 3 has no version 4 endpoints at all. */
export function refuseOnRelease3(ctx: WebContext, reply: FastifyReply): boolean {
  if (ctx.config.mode.release === '4') return false;
  reply.code(404).send({ message: 'This endpoint is not available on release 3.' });
  return true;
}

/** Deprecated reads: served in legacy and dual, 404 in events_only. */
export function refuseLegacyRead(ctx: WebContext, reply: FastifyReply): boolean {
  if (behaviourOf(ctx.config.mode).servesLegacyEndpoints) return false;
  notInEventsOnly(reply);
  return true;
}
