/**
 * Runs a history on the real services: the CLI roles (`web`, `worker`, `migrate`, `backfill run`,
 * `ingestion replay`) as processes against real PostgreSQL, Redis, the embedded engine served by
 * `observatory analytics-server` and an S3 server for the ingestion log, each history in databases
 * (and a log prefix) of its own. Then reads `events_full` FINAL and compares it with the model.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { cliEnv } from '../../cluster/observatory-cli.ts';
import { freePort } from '../fixtures/ports.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type ManagedProcess, startProcess } from '../fixtures/processes.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import { type S3Server, startS3Server } from '../fixtures/s3.ts';
import {
  type AnalyticsServer,
  basicAuth,
  cli,
  createProject,
  DUAL_ENV,
  type Env,
  LEGACY_ENV,
  type Project,
  ROOT,
  startAnalyticsServer,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { compareEvents, type StoreRow } from './compare.ts';
import { DATASET, type LogEvent, type Mode, type Step } from './history.ts';
import {
  claims,
  deadFiles,
  LOG_BUCKET,
  leasedFiles,
  logEnv,
  loseRowAndSweep,
  pendingFiles,
  redeliver,
} from './log.ts';
import { expectedEvents } from './model.ts';
import { requestsFor } from './producers.ts';

/** Datastores shared by the histories of one run; each history gets its own databases in them. */
export interface Stores {
  pg: PostgresFixture;
  redis: RedisFixture;
  analytics: AnalyticsServer;
  s3: S3Server;
  stop(): Promise<void>;
}

export async function startStores(): Promise<Stores> {
  const [pgf, redis, analytics, s3] = await Promise.all([
    startPostgres(),
    startRedis(),
    startAnalyticsServer(),
    startS3Server(),
  ]);
  await s3.createBucket(LOG_BUCKET);
  return {
    pg: pgf,
    redis,
    analytics,
    s3,
    stop: async () => void (await Promise.all([analytics.stop(), pgf.stop(), redis.stop(), s3.stop()])),
  };
}

const MODE_ENV: Record<Mode, Env> = {
  release3: { SERVICE_RELEASE: '3' },
  legacy: LEGACY_ENV,
  dual: DUAL_ENV,
  events_only: { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' },
};

/** Propagation every second, a partition taken 1 s after its window closes; the chain only as Jobs. */
const WORKER_ENV: Env = {
  SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1',
  SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '1',
  SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
};
const BACKFILL_ENV: Env = {
  ...DUAL_ENV,
  SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES: 'true',
};
const PARTITION_MS = 3 * 60_000;
/** A map column as numbers (the client sends 64-bit counts and decimals as strings). */
const numbers = (m: unknown) =>
  Object.fromEntries(Object.entries(m as Record<string, unknown>).map(([k, v]) => [k, Number(v)]));
/** Longest wait for the last staging partition to close and be propagated. */
const SETTLE_LIMIT_MS = PARTITION_MS + 120_000;
/** Longest wait for the log to be drained: leases of killed drainers, retries after failures. */
const LOG_DRAIN_LIMIT_MS = 120_000;
/** Longest wait for a drainer to start and claim what is pending. */
const DRAINER_CLAIM_LIMIT_MS = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HistoryResult {
  diffs: string[];
  /** Rows read back (null: no events_full). */
  store: StoreRow[] | null;
  log: string[];
}

/** Runs one history (number `n` in this run) and returns how the store differs from the model. */
export async function runHistory(stores: Stores, steps: Step[], n: number): Promise<HistoryResult> {
  const h = await HistoryRun.open(stores, n);
  try {
    return await h.run(steps);
  } catch (err) {
    // A role that fails to start or a backfill step that fails is a finding too, not a crash.
    return { diffs: [...h.diffs, `history aborted: ${(err as Error).message}`], store: null, log: h.log };
  } finally {
    await h.close();
  }
}

/** Redis's default number of databases; far more than the histories run at once. */
const REDIS_DATABASES = 16;
let nextRedisDb = 0;

class HistoryRun {
  readonly log: string[] = [];
  readonly diffs: string[] = [];
  readonly baseUs = (Date.now() - 2 * 3600_000) * 1000;
  private web: WebServer | undefined;
  private worker: WebServer | undefined;
  private mode: Mode = 'release3';
  private project!: Project;
  private chain: Promise<void> | undefined;
  private readonly started = Date.now();
  /** The log's variables once the history turned it on; release 3 never gets them. */
  private logEnv: Env | undefined;
  private logPool: pg.Pool | undefined;
  /** Since the last rollback (or the start): files of earlier epochs were written to tables since dropped. */
  private epochStart = Date.now();
  /** When each request of this epoch was sent. */
  private sentAt: number[] = [];

  private readonly stores: Stores;
  private readonly env: Env;
  private readonly database: string;

  private constructor(stores: Stores, env: Env, database: string) {
    this.stores = stores;
    this.env = env;
    this.database = database;
  }

  static async open(stores: Stores, n: number): Promise<HistoryRun> {
    const database = `oracle_${process.pid}_${n}`;
    const pgUrl = new URL(stores.pg.url);
    const admin = new pg.Client({ connectionString: stores.pg.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await admin.end();
    }
    pgUrl.pathname = `/${database}`;
    await stores.analytics.client.command({ query: `CREATE DATABASE ${database}` });
    // Its own Redis database among those of the histories running beside it: the propagation's
    // cursor and lease are per database, and a history sharing another's would skip its partitions.
    const redisDb = nextRedisDb++ % REDIS_DATABASES;
    const redis = new Redis(`${stores.redis.url}/${redisDb}`);
    await redis.flushdb();
    redis.disconnect();
    return new HistoryRun(
      stores,
      {
        DATABASE_URL: pgUrl.toString(),
        CLICKHOUSE_URL: stores.analytics.url,
        CLICKHOUSE_DB: database,
        REDIS_URL: `${stores.redis.url}/${redisDb}`,
      },
      database,
    );
  }

  private note(line: string) {
    this.log.push(`${((Date.now() - this.started) / 1000).toFixed(1).padStart(6)}s ${line}`);
  }

  async run(steps: Step[]): Promise<HistoryResult> {
    await this.startWeb('release3');
    this.project = await createProject(this.env, 'oracle');
    // The dataset item experiments link to (datasets are relational data, made as an admin would).
    await this.withPg(async (c) => {
      await c.query('INSERT INTO datasets (id, project_id, name) VALUES ($1, $2, $3)', [
        DATASET.id,
        this.project.projectId,
        DATASET.name,
      ]);
      await c.query(
        `INSERT INTO dataset_items (id, project_id, dataset_id, input, expected_output) VALUES ($1, $2, $3, '{"q":1}', '"42"')`,
        [DATASET.itemId, this.project.projectId, DATASET.id],
      );
    });

    for (const [i, step] of steps.entries()) await this.apply(step, i);
    if (this.chain) await this.joinChain();
    await this.drainLog('the read');
    await this.finishDeletions();
    if (this.logPool)
      this.diffs.push(...(await deadFiles(this.logPool)).map((f) => `log file set aside: ${f}`));
    await this.settle();
    const store = await this.readEvents();
    const expectation = expectedEvents(steps, this.baseUs);
    this.diffs.push(...compareEvents(expectation, store));
    this.diffs.push(...(await this.readDeleted(steps)));
    return { diffs: this.diffs, store, log: this.log };
  }

  private async apply(step: Step, i: number): Promise<void> {
    switch (step.op) {
      case 'log-on':
        this.note(`ingestion log on, wait for store ${step.waitForStore}`);
        this.logEnv = logEnv(this.stores.s3, `${this.database}/`, step.waitForStore);
        this.logPool = new pg.Pool({ connectionString: this.env['DATABASE_URL'], max: 2 });
        return;
      case 'log':
        return this.logEvent(step.event);
      case 'switch':
        this.note(`switch to ${step.to}`);
        return this.redeploy(step.to);
      case 'rollback': {
        await this.drainLog('the rollback');
        this.note('rollback: migrate down --to 37, release 3');
        await this.stopRoles();
        this.epochStart = Date.now();
        this.sentAt = [];
        const down = await cli(['migrate', 'down', '--to', '37'], { ...this.env, ...LEGACY_ENV });
        if (down.code !== 0) throw new Error(`migrate down --to 37 failed: ${down.stderr}`);
        return this.startWeb('release3');
      }
      case 'backfill':
        this.note(`backfill${step.concurrent ? ' (concurrent)' : ''}`);
        this.chain = this.runChain(step.kills);
        if (!step.concurrent) await this.joinChain();
        return;
      case 'backfill-join':
        return this.joinChain();
      case 'worker':
        if (!this.workerRuns(this.mode)) return;
        if (step.action === 'kill' && this.worker) {
          this.note('worker SIGKILL');
          await this.worker.process.kill('SIGKILL');
          this.worker = undefined;
        } else if (step.action === 'start' && !this.worker) {
          this.note('worker start');
          this.worker = await startWorker(this.workerEnv(this.mode));
        }
        return;
      case 'send':
        return this.send(step.traffic, i);
      case 'delete':
        return this.deleteTrace(step.traceId, i);
    }
  }

  /** What a user does: the trace's deletion through the public API, answered once it is queued. */
  private async deleteTrace(traceId: string, i: number): Promise<void> {
    const path = `/api/public/traces/${encodeURIComponent(traceId)}`;
    const res = await fetch(`${this.web!.url}${path}`, {
      method: 'DELETE',
      headers: { authorization: basicAuth(this.project) },
    });
    const text = await res.text();
    this.note(`step ${i} delete ${traceId} -> ${res.status}`);
    if (res.status !== 200)
      this.diffs.push(`step ${i}: DELETE ${path} in ${this.mode} answered ${res.status}: ${text}`);
  }

  /** Each deleted trace, read through the public API after the history: never found again. */
  private async readDeleted(steps: Step[]): Promise<string[]> {
    const found: string[] = [];
    for (const s of steps) {
      if (s.op !== 'delete') continue;
      const res = await fetch(`${this.web!.url}/api/public/traces/${encodeURIComponent(s.traceId)}`, {
        headers: { authorization: basicAuth(this.project) },
      });
      await res.text();
      if (res.status !== 404)
        found.push(`deleted trace ${s.traceId} readable again: GET answered ${res.status}`);
    }
    return found;
  }

  private async send(traffic: Extract<Step, { op: 'send' }>['traffic'], i: number): Promise<void> {
    const requests = requestsFor(traffic, i, this.baseUs, basicAuth(this.project), {
      itemId: DATASET.itemId,
    });
    for (const r of requests) {
      this.sentAt.push(Date.now());
      const res = await fetch(`${this.web!.url}${r.path}`, {
        method: 'POST',
        headers: r.headers,
        body: JSON.stringify(r.body),
      });
      const text = await res.text();
      const refusedBatch = this.mode === 'events_only' && r.path === '/api/public/ingestion';
      const ok =
        r.path === '/api/public/ingestion'
          ? res.status === 207 &&
            (refusedBatch || (JSON.parse(text) as { errors: unknown[] }).errors.length === 0)
          : res.status === 200;
      this.note(`step ${i} ${traffic.kind} ${r.path} -> ${res.status}`);
      if (!ok)
        this.diffs.push(`step ${i}: ${r.path} in ${this.mode} answered ${res.status}: ${text.slice(0, 300)}`);
    }
  }

  private async redeploy(mode: Mode): Promise<void> {
    const hadWorker = this.worker !== undefined;
    await this.stopRoles();
    await this.startWeb(mode);
    if (hadWorker && this.workerRuns(mode)) this.worker = await startWorker(this.workerEnv(mode));
  }

  /** Where a worker has work: the propagation (dual, events_only), the log's drain (every release-4 mode). */
  private workerRuns(mode: Mode): boolean {
    return mode === 'dual' || mode === 'events_only' || (mode === 'legacy' && this.logEnv !== undefined);
  }

  private roleEnv(mode: Mode): Env {
    return { ...this.env, ...MODE_ENV[mode], ...(mode === 'release3' ? {} : this.logEnv) };
  }

  private workerEnv(mode: Mode): Env {
    return { ...this.roleEnv(mode), ...WORKER_ENV };
  }

  private async startWeb(mode: Mode): Promise<void> {
    this.mode = mode;
    this.web = await startWeb(this.roleEnv(mode));
  }

  private async logEvent(e: LogEvent): Promise<void> {
    const pool = this.logPool!;
    switch (e.kind) {
      case 'kill-drainer':
        return this.killDrainer(e.afterMs);
      case 'redeliver': {
        const key = await redeliver(pool, this.epochStart, e.file);
        this.note(key ? `log: ${key} pending again` : 'log: no drained file to redeliver');
        return;
      }
      case 'replay':
        return this.replay(e.from);
      case 'sweep': {
        const swept = await loseRowAndSweep(pool, this.roleEnv(this.mode), this.epochStart, e.file);
        this.note(swept ? `log: row of ${swept.key} lost, sweep queued ${swept.queued}` : 'log: no file');
        if (swept && swept.queued !== 1)
          this.diffs.push(`the sweep queued ${swept.queued} files after the row of ${swept.key} was lost`);
        return;
      }
    }
  }

  /**
   * A worker of its own, SIGKILLed `afterMs` after its drain claimed files (seen in the queue):
   * before, within or after the claim's write and checkpoint. With nothing pending, `afterMs`
   * after its spawn.
   */
  private async killDrainer(afterMs: number): Promise<void> {
    const pool = this.logPool!;
    const pending = await pendingFiles(pool);
    const port = await freePort();
    const child: ManagedProcess = startProcess(
      'drainer',
      process.execPath,
      [`${ROOT}/server/bin/observatory.ts`, 'worker'],
      { env: cliEnv({ HOST: '127.0.0.1', PORT: String(port), ...this.workerEnv(this.mode) }) },
    );
    const deadline = Date.now() + DRAINER_CLAIM_LIMIT_MS;
    const before = await claims(pool);
    const claimed = async () => (await claims(pool)) > before;
    while (pending > 0 && !child.exitInfo() && Date.now() < deadline && !(await claimed())) await sleep(5);
    await Promise.race([child.exited, sleep(afterMs)]);
    await child.kill('SIGKILL');
    this.note(
      `drainer SIGKILLed ${afterMs} ms after ${pending > 0 ? 'its claim' : 'its spawn'}: of ${pending} pending files, ${await pendingFiles(pool)} pending, ${await leasedFiles(pool)} leased`,
    );
  }

  /** `observatory ingestion replay` of this project from the `from`-th request of this epoch to now. */
  private async replay(from: number): Promise<void> {
    if (this.sentAt.length === 0) return this.note('replay: nothing sent since the last rollback');
    const fromIso = new Date(this.sentAt[from % this.sentAt.length]!).toISOString();
    const toIso = new Date(Date.now() + 1_000).toISOString();
    const args = [
      'ingestion',
      'replay',
      '--from',
      fromIso,
      '--to',
      toIso,
      '--project',
      this.project.projectId,
    ];
    const out = await cli([...args, '--json'], this.roleEnv(this.mode), 300_000);
    this.note(`replay from ${fromIso} -> exit ${out.code} ${out.stdout.trim()}`);
    if (out.code !== 0)
      this.diffs.push(`replay from ${fromIso} failed (${out.code}): ${out.stderr.slice(-500)}`);
  }

  /**
   * Waits until the log holds nothing pending, a worker draining it (started if none runs): before
   * a rollback, since release 3 has no drain, and before the read.
   */
  private async drainLog(before: string): Promise<void> {
    const pool = this.logPool;
    if (!pool || (await pendingFiles(pool)) === 0) return;
    if (!this.worker) this.worker = await startWorker(this.workerEnv(this.mode));
    this.note(`waiting for the log to be drained before ${before}`);
    const deadline = Date.now() + LOG_DRAIN_LIMIT_MS;
    for (let pending = await pendingFiles(pool); pending > 0; pending = await pendingFiles(pool)) {
      if (Date.now() > deadline) {
        this.diffs.push(`${pending} log files still pending ${LOG_DRAIN_LIMIT_MS / 1000} s before ${before}`);
        return;
      }
      await sleep(250);
    }
  }

  /**
   * Waits until every queued trace deletion has finished, a worker running them (started if none
   * runs): a deletion answers once queued (its tombstones recorded), the worker deletes the rows.
   */
  private async finishDeletions(): Promise<void> {
    const unfinished = () =>
      this.withPg(
        async (c) =>
          (
            await c.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM trace_deletions WHERE state IN ('queued', 'running')",
            )
          ).rows[0]!.n,
      );
    if ((await unfinished()) === 0) return;
    if (!this.worker) this.worker = await startWorker(this.workerEnv(this.mode));
    this.note('waiting for the queued trace deletions before the read');
    const deadline = Date.now() + LOG_DRAIN_LIMIT_MS;
    for (let left = await unfinished(); left > 0; left = await unfinished()) {
      if (Date.now() > deadline) {
        this.diffs.push(`${left} trace deletions unfinished ${LOG_DRAIN_LIMIT_MS / 1000} s before the read`);
        return;
      }
      await sleep(250);
    }
  }

  private async stopRoles(): Promise<void> {
    await Promise.all([this.web?.stop(), this.worker?.stop()]);
    this.web = undefined;
    this.worker = undefined;
  }

  /** The backfill chain, beside a worker of its own when the history has a log. */
  private async runChain(kills: (number | null)[]): Promise<void> {
    // Each step waits for the log's older writes to be in the store (server/features/ingestion/log/wait-drained.ts):
    // another worker replica drains meanwhile, whatever the history does to its worker. It starts
    // beside the first step, not before it, so that a step that does not wait reads too early.
    const drainer = this.logEnv ? startWorker(this.workerEnv(this.mode)) : undefined;
    drainer?.catch(() => {}); // a drainer that does not start leaves the steps waiting: reported by them
    try {
      await this.runSteps(kills);
    } finally {
      await (await drainer?.catch(() => undefined))?.stop();
    }
  }

  /** Steps 1-5 one after the other as one-shot processes; a step may be SIGKILLed first. */
  private async runSteps(kills: (number | null)[]): Promise<void> {
    const env = { ...this.env, ...BACKFILL_ENV };
    for (let step = 1; step <= 5; step++) {
      const kill = kills[step - 1];
      if (kill !== null && kill !== undefined) {
        const child: ManagedProcess = startProcess(
          `backfill-${step}`,
          process.execPath,
          [`${ROOT}/server/bin/observatory.ts`, 'backfill', 'run', '--step', String(step)],
          { env: { PATH: process.env['PATH'], LOG_LEVEL: 'warn', ...env } as NodeJS.ProcessEnv },
        );
        await Promise.race([child.exited, new Promise((r) => setTimeout(r, kill))]);
        await child.kill('SIGKILL');
        this.note(`backfill step ${step} SIGKILLed after ${kill} ms`);
      }
      const done = await cli(['backfill', 'run', '--step', String(step)], env, 300_000);
      this.note(`backfill step ${step} -> exit ${done.code}`);
      if (done.code !== 0)
        throw new Error(`backfill step ${step} failed (${done.code}): ${done.stderr.slice(-500)}`);
    }
  }

  private async joinChain(): Promise<void> {
    const chain = this.chain;
    this.chain = undefined;
    await chain;
  }

  /**
   * Lets the dual-write propagation take every staged partition: the worker runs (started if it
   * is not), and we wait until the newest partition's window closed and the job's cursor passed it.
   */
  private async settle(): Promise<void> {
    if (this.mode !== 'dual' && this.mode !== 'events_only') return;
    const partition = await this.newestStaged();
    if (!partition) return;
    if (!this.worker) this.worker = await startWorker(this.workerEnv(this.mode));
    this.note(`settle: waiting for partition ${partition} to be propagated`);
    const deadline = Date.now() + SETTLE_LIMIT_MS;
    for (;;) {
      // The answer as read (or why there is none): what a failure below reports.
      const health = await fetch(`${this.worker.url}/api/health?failIfEventPropagationStuck=true`)
        .then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))
        .catch((err: Error) => ({ status: 0, body: { error: err.message } as Record<string, unknown> }));
      const propagation = health.body['eventPropagation'] as
        | { lastProcessedPartition?: string | null }
        | undefined;
      const cursor = propagation?.lastProcessedPartition ?? '';
      if (cursor >= partition) break;
      // A partition whose every row was deleted (all its traces deleted) leaves the store: there
      // is nothing left in it to propagate.
      if ((await this.newestStaged()) < partition) {
        this.note(`settle: partition ${partition} is gone (its rows deleted)`);
        break;
      }
      if (Date.now() > deadline) {
        this.diffs.push(
          `propagation did not take partition ${partition} within ${SETTLE_LIMIT_MS / 1000} s (cursor ${cursor || 'none'})`,
          `worker health: ${health.status} ${JSON.stringify(health.body)}; exited: ${JSON.stringify(this.worker.process.exitInfo() ?? null)}`,
          `worker output (tail): ${this.worker.process.output().slice(-4_000)}`,
        );
        break;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
    this.note('settled');
  }

  /** The newest staging partition with active parts ('' when none). */
  private async newestStaged(): Promise<string> {
    const [newest] = await this.query<{ partition: string }>(
      `SELECT max(partition) AS partition FROM system.parts WHERE database = {db:String} AND table = 'observations_batch_staging' AND active`,
    );
    return newest?.partition ?? '';
  }

  private async readEvents(): Promise<StoreRow[] | null> {
    const exists = await this.query<{ n: number }>(
      `SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = 'events_full'`,
    );
    if (Number(exists[0]?.n ?? 0) === 0) return null;
    const rows = await this.query<Record<string, unknown>>(
      `SELECT trace_id, span_id, parent_span_id, type, name, trace_name, user_id, session_id, tags, release,
              version, environment, public, bookmarked, level, status_message, provided_model_name,
              model_id, usage_details, cost_details,
              metadata_names, metadata_values, toUnixTimestamp64Micro(start_time) AS start_us,
              experiment_id, experiment_name, experiment_item_id, experiment_dataset_id, experiment_item_root_span_id
       FROM ${this.database}.events_full FINAL WHERE project_id = {p:String} ORDER BY trace_id, span_id`,
    );
    return rows.map((r) => {
      const names = r['metadata_names'] as string[];
      const values = r['metadata_values'] as string[];
      const { metadata_names: _n, metadata_values: _v, ...rest } = r;
      return {
        ...rest,
        public: Boolean(rest['public']),
        bookmarked: Boolean(rest['bookmarked']),
        start_us: Number(rest['start_us']),
        usage_details: numbers(rest['usage_details']),
        cost_details: numbers(rest['cost_details']),
        metadata: Object.fromEntries(names.map((k, i) => [k, values[i]!])),
      } as unknown as StoreRow;
    });
  }

  private async query<T>(sql: string): Promise<T[]> {
    const rs = await this.stores.analytics.client.query({
      query: sql,
      query_params: { db: this.database, p: this.project?.projectId ?? '' },
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    return rs.json<T>();
  }

  private async withPg<T>(f: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({ connectionString: this.env['DATABASE_URL'] });
    await c.connect();
    try {
      return await f(c);
    } finally {
      await c.end();
    }
  }

  async close(): Promise<void> {
    await this.chain?.catch(() => {});
    await this.stopRoles();
    await this.logPool?.end();
    await this.stores.analytics.client
      .command({ query: `DROP DATABASE IF EXISTS ${this.database}` })
      .catch(() => {});
    const admin = new pg.Client({ connectionString: this.stores.pg.url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${this.database} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}
