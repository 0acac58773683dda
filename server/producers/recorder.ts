/**
 * Records which keys and SDKs send traffic through paths that `events_only` refuses (batch
 * ingestion of non-score events, the legacy endpoints, OTLP without client-side propagation), so
 * the cutover can wait until none has been seen for a while. Counts are aggregated in memory and
 * flushed to PostgreSQL every few seconds: this is telemetry about producers, not their data.
 */
import type pg from 'pg';
import type { ProducerPath, ProducersReport } from '../contract/worker-api.ts';

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
    this.#timer = setInterval(() => void this.flush().catch(() => {}), flushEveryMs);
    this.#timer.unref();
  }

  record(key: ProducerKey): void {
    const id = JSON.stringify([key.publicKey, key.sdkName, key.sdkVersion, key.path]);
    const now = new Date();
    const t = this.#pending.get(id);
    if (t) {
      t.last = now;
      t.requests++;
    } else this.#pending.set(id, { key, first: now, last: now, requests: 1 });
  }

  async flush(): Promise<void> {
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    for (const t of batch) {
      await this.#pool.query(
        `INSERT INTO producer_activity (project_id, public_key, sdk_name, sdk_version, path, first_seen, last_seen, requests)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (public_key, sdk_name, sdk_version, path) DO UPDATE
         SET last_seen = GREATEST(producer_activity.last_seen, EXCLUDED.last_seen),
             requests = producer_activity.requests + EXCLUDED.requests`,
        [
          t.key.projectId,
          t.key.publicKey,
          t.key.sdkName,
          t.key.sdkVersion,
          t.key.path,
          t.first,
          t.last,
          t.requests,
        ],
      );
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush().catch(() => {});
  }
}

export async function producersSince(pool: pg.Pool, since: Date): Promise<ProducersReport> {
  const r = await pool.query<{
    project_id: string;
    public_key: string;
    sdk_name: string;
    sdk_version: string;
    path: ProducerPath;
    first_seen: Date;
    last_seen: Date;
    requests: string;
  }>('SELECT * FROM producer_activity WHERE last_seen >= $1 ORDER BY last_seen DESC', [since]);
  return {
    since: since.toISOString(),
    producers: r.rows.map((row) => ({
      projectId: row.project_id,
      publicKey: row.public_key,
      sdkName: row.sdk_name,
      sdkVersion: row.sdk_version,
      path: row.path,
      firstSeen: row.first_seen.toISOString(),
      lastSeen: row.last_seen.toISOString(),
      requests: Number(row.requests),
    })),
  };
}
