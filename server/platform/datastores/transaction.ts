import type pg from 'pg';

/**
 * Runs `fn` in one PostgreSQL transaction on a client of its own: committed when `fn` returns,
 * rolled back when it throws (a ROLLBACK that fails too, on a broken connection, does not hide the
 * error). `begin` opens it: `BEGIN`, or `BEGIN` with `SET LOCAL` settings in the same round trip.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
