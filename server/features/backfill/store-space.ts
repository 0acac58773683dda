/** The analytics store's free disk and a table's size, as the backfill's pressure checks read them. */
import type { ClickHouseClient } from '@clickhouse/client';
import { FREE_DISK_QUERY, TABLE_SIZE_QUERY } from './pressure.ts';

export async function readFreeBytes(analytics: ClickHouseClient): Promise<number> {
  const rs = await analytics.query({ query: FREE_DISK_QUERY, format: 'JSONEachRow' });
  return Number((await rs.json<{ free: string | number }>())[0]?.free ?? 0);
}

export async function readTableSize(
  analytics: ClickHouseClient,
  table: string,
): Promise<{ rows: number; bytes: number }> {
  const rs = await analytics.query({
    query: TABLE_SIZE_QUERY,
    query_params: { table },
    format: 'JSONEachRow',
  });
  const [r] = await rs.json<{ rows: string | number; bytes: string | number }>();
  return { rows: Number(r?.rows ?? 0), bytes: Number(r?.bytes ?? 0) };
}
