/**
 * Records which keys and SDKs send traffic through paths that `events_only` refuses (batch
 * ingestion of non-score events, the legacy endpoints, OTLP without client-side propagation), so
 * the cutover can wait until none has been seen for a while. Counts are aggregated in memory and
 * flushed to PostgreSQL every few seconds: this is telemetry about producers, not their data.
 */
import type pg from 'pg';
import { consequenceOf, type ProducerPath, type ProducersReport } from '../../contract/worker-api.ts';
import { activeLegacyRules } from '../evaluation/store.ts';

export interface ProducerKey {
  projectId: string;
  publicKey: string;
  sdkName: string;
  sdkVersion: string;
  path: ProducerPath;
}

interface Tally {
  key: ProducerKey;
  first: Date;
  last: Date;
  requests: number;
}

export class ProducerRecorder {
  readonly #pool: pg.Pool;
  #pending = new Map<string, Tally>();
  #timer: NodeJS.Timeout | undefined;

  constructor(pool: pg.Pool, flushEveryMs = 5_000) {
    this.#pool = pool;
    // A failed flush keeps its tallies for the next one.
    this.#timer = setInterval(() => void this.flush().catch(() => {}), flushEveryMs);
    this.#timer.unref();
  }

  record(key: ProducerKey): void {
    this.#add({ key, first: new Date(), last: new Date(), requests: 1 });
  }

  #add(t: Tally): void {
    const id = JSON.stringify([t.key.publicKey, t.key.sdkName, t.key.sdkVersion, t.key.path]);
    const seen = this.#pending.get(id);
    if (!seen) {
      this.#pending.set(id, { ...t });
      return;
    }
    if (t.first < seen.first) seen.first = t.first;
    if (t.last > seen.last) seen.last = t.last;
    seen.requests += t.requests;
  }

  /**
   * Writes the pending tallies in one statement, so they land all or none; when the database
   * fails, they go back into the pending ones (merged with what arrived meanwhile) for the next
   * flush, and the error is thrown. The cutover gate relies on these tallies most when something
   * is wrong.
   */
  async flush(): Promise<void> {
    const batch = [...this.#pending.values()];
    if (batch.length === 0) return;
    this.#pending = new Map();
    try {
      await this.#pool.query(
        `INSERT INTO producer_activity (project_id, public_key, sdk_name, sdk_version, path, first_seen, last_seen, requests)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::bigint[])
         ON CONFLICT (public_key, sdk_name, sdk_version, path) DO UPDATE
         SET last_seen = GREATEST(producer_activity.last_seen, EXCLUDED.last_seen),
             requests = producer_activity.requests + EXCLUDED.requests`,
        [
          batch.map((t) => t.key.projectId),
          batch.map((t) => t.key.publicKey),
          batch.map((t) => t.key.sdkName),
          batch.map((t) => t.key.sdkVersion),
          batch.map((t) => t.key.path),
          batch.map((t) => t.first),
          batch.map((t) => t.last),
          batch.map((t) => t.requests),
        ],
      );
    } catch (err) {
      for (const t of batch) this.#add(t);
      throw err;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush().catch(() => {});
  }
}

/**
 * Producers seen since `since`, and the enabled trace-level evaluation rules the cutover stops; of
 * the projects `projectIds` only, when given.
 */
export async function producersSince(
  pool: pg.Pool,
  since: Date,
  projectIds?: readonly string[],
): Promise<ProducersReport> {
  const r = await pool.query<{
    project_id: string;
    public_key: string;
    sdk_name: string;
    sdk_version: string;
    path: ProducerPath;
    first_seen: Date;
    last_seen: Date;
    requests: string;
  }>(
    `SELECT * FROM producer_activity WHERE last_seen >= $1 AND ($2::text[] IS NULL OR project_id = ANY($2))
     ORDER BY last_seen DESC`,
    [since, projectIds ?? null],
  );
  return {
    since: since.toISOString(),
    legacyEvaluators: await activeLegacyRules(pool, projectIds),
    producers: r.rows.map((row) => ({
      projectId: row.project_id,
      publicKey: row.public_key,
      sdkName: row.sdk_name,
      sdkVersion: row.sdk_version,
      path: row.path,
      consequence: consequenceOf(row.path),
      firstSeen: row.first_seen.toISOString(),
      lastSeen: row.last_seen.toISOString(),
      requests: Number(row.requests),
    })),
  };
}
