/**
 * `observatory dev [--port N] [--data DIR] [--json]`: the whole service in one process on the
 * embedded datastores (the ClickHouse engine in-process, PGlite, no Redis server), with a default
 * project whose keys are printed, ready for an SDK or an OTLP exporter. The worker's jobs run in
 * the same process (the dual-write propagation, and the backfill chain when enabled), on an
 * in-process coordination store, so staged data from older SDKs arrives as in a deployment.
 *
 * The default project's keys are kept in `<data>/dev-project.json` (mode 0600) so that a restart
 * on the same data directory prints the same working keys; the database stores only the hash.
 * Likewise the default web UI user (owner of the default organization) in `<data>/dev-user.json`.
 * Without ENCRYPTION_KEY the data directory's own key seals stored secrets, and while dev runs the
 * CLI's `--data DIR` finds its database there (dev-data.ts).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createLogger } from '../app/runtime/logger.ts';
import { onShutdown } from '../app/runtime/shutdown.ts';
import { buildWebApp } from '../app/web/app.ts';
import { startWorkerJobs } from '../app/worker/jobs.ts';
import { traceDeletionDeps } from '../features/deletion/traces.ts';
import { MaskingCatalog } from '../features/masking/catalog.ts';
import { ModelCatalog } from '../features/models/catalog.ts';
import { BUILT_IN_PRICE_FILE, readPriceFile } from '../features/models/price-file.ts';
import { loadBuiltInModels } from '../features/models/store.ts';
import { warmTokenizers } from '../features/models/tokenize.ts';
import { createProject, KeyVerifier, type ProjectKeys } from '../features/projects/keys.ts';
import { ingestionTombstones } from '../features/tombstones/record.ts';
import { verifyPassword } from '../features/users/passwords.ts';
import { generatePassword, provisionUser } from '../features/users/provision.ts';
import { setPassword, UserExists, userByEmail } from '../features/users/store.ts';
import { pgEntityLocks } from '../features/write-model/entity-locks.ts';
import { clickhouseStore } from '../features/write-model/store.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { localBlobStore } from '../platform/blobs/local.ts';
import { s3BlobStore } from '../platform/blobs/s3.ts';
import { memoryCoordination } from '../platform/coordination/store.ts';
import { createAnalyticsClient } from '../platform/datastores/clickhouse.ts';
import { startEmbeddedPostgres } from '../platform/datastores/embedded-postgres.ts';
import { createPool } from '../platform/datastores/postgres.ts';
import { statementBounds } from '../platform/datastores/statement-bounds.ts';
import { migratorsFor } from '../platform/migrations/schema.ts';
import { devEncryptionKey, writeDevConnection, writeSecretFile } from './dev-data.ts';
import { intFlag, parseFlags } from './usage.ts';

export interface DevReady {
  url: string;
  projectId: string;
  publicKey: string;
  secretKey: string;
  /** The web UI, and the default user who signs in to it. */
  uiUrl: string;
  email: string;
  password: string;
}

const DEV_EMAIL = 'dev@observatory.local';

const writeSecret = (file: string, value: unknown) => writeSecretFile(file, JSON.stringify(value));

async function defaultProject(file: string, create: () => Promise<ProjectKeys>, verify: KeyVerifier) {
  if (existsSync(file)) {
    const keys = JSON.parse(readFileSync(file, 'utf8')) as ProjectKeys;
    if (await verify.verify(keys.publicKey, keys.secretKey)) return keys;
  }
  const keys = await create();
  writeSecret(file, keys);
  return keys;
}

/** The default user: the one of an earlier run when its password still works, else made (or reset). */
async function defaultUser(file: string, pool: ReturnType<typeof createPool>) {
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { email: string; password: string };
    const user = await userByEmail(pool, saved.email);
    if (user && (await verifyPassword(saved.password, user.password_hash))) return saved;
  }
  const creds = { email: DEV_EMAIL, password: generatePassword() };
  try {
    await provisionUser(pool, { ...creds, name: 'Developer', role: 'owner' });
  } catch (err) {
    if (!(err instanceof UserExists)) throw err;
    await setPassword(pool, creds.email, creds.password);
  }
  writeSecret(file, creds);
  return creds;
}

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    port: { type: 'string' },
    data: { type: 'string' },
    json: { type: 'boolean' },
  });
  const port = intFlag(values.port, 'port') ?? 3000;
  const dataDir = resolve(values.data ?? '.data/dev');
  mkdirSync(dataDir, { recursive: true });
  const given = processConfig('dev', {
    defaults: { HOST: '127.0.0.1' },
    overrides: { CLICKHOUSE_URL: `chdb://${join(dataDir, 'analytics')}` },
  });
  const log = createLogger('dev', given.logLevel);
  // LLM connections, alert channels and integrations need a key; a newcomer has not set one.
  const ownKey = given.llm.encryptionKey ? undefined : devEncryptionKey(dataDir);
  const config = ownKey ? { ...given, llm: { ...given.llm, encryptionKey: ownKey.key } } : given;
  if (ownKey?.created) {
    log.info(
      { file: ownKey.file },
      'no ENCRYPTION_KEY: created a key for stored secrets in the data directory (keep it with the data)',
    );
  }
  const pg = await startEmbeddedPostgres({ dataDir: join(dataDir, 'postgres') });
  const pool = createPool(pg.url, pg.poolSize);
  // One process serves the web and runs the worker's jobs: the longer bounds of the two.
  const analytics = createAnalyticsClient(
    config.clickhouse,
    statementBounds('worker', config.analyticsTimeouts),
  );
  const migrators = migratorsFor(config, pool, analytics);
  await migrators.relational.up();
  await migrators.analytics.up();
  await loadBuiltInModels(pool, readPriceFile(BUILT_IN_PRICE_FILE));
  warmTokenizers();
  const keysVerifier = new KeyVerifier(pool);
  const keys = await defaultProject(
    join(dataDir, 'dev-project.json'),
    () => createProject(pool, 'default'),
    keysVerifier,
  );
  const user = await defaultUser(join(dataDir, 'dev-user.json'), pool);

  // Media and exports go to local directories (media served by this process) unless S3 buckets are configured.
  let url = '';
  const localMedia = config.media.s3
    ? undefined
    : localBlobStore({ dir: join(dataDir, 'blobs', 'media'), bucket: 'media', baseUrl: () => url });
  const mediaBlobs = localMedia ?? (config.media.s3 && s3BlobStore(config.media.s3));
  const exportBlobs = config.exportStorage
    ? s3BlobStore(config.exportStorage)
    : localBlobStore({ dir: join(dataDir, 'blobs', 'exports'), bucket: 'exports', baseUrl: () => url });
  const coordination = memoryCoordination();
  const models = new ModelCatalog(pool);
  await models.warm();
  const app = buildWebApp({
    config: { ...config, databaseUrl: pg.url },
    pool,
    analytics,
    store: clickhouseStore(analytics, config.clickhouse),
    locks: pgEntityLocks(pool),
    tombstones: ingestionTombstones(traceDeletionDeps(config, { pool, analytics })),
    keys: keysVerifier,
    models,
    masking: new MaskingCatalog(pool),
    mediaBlobs,
    exportBlobs,
    localBlobs: localMedia && [localMedia],
    coordination,
    shuttingDown: () => false,
  });
  const jobs = startWorkerJobs({
    config,
    pool,
    analytics,
    coordination,
    log,
    workerId: 'dev',
    schemaKnown: true,
    exportBlobs,
    mediaBlobs,
  });
  const host = config.host;
  await app.listen({ host, port });
  const address = app.server.address();
  url = `http://${host}:${typeof address === 'object' && address ? address.port : port}`;
  const removeConnection = writeDevConnection(dataDir, pg.url);
  const ready: DevReady = {
    url,
    projectId: keys.projectId,
    publicKey: keys.publicKey,
    secretKey: keys.secretKey,
    uiUrl: `${url}/`,
    email: user.email,
    password: user.password,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(ready)}\n`);
  else {
    process.stdout.write(
      [
        `Observatory is running at ${url} (write mode ${config.mode.writeMode}, data in ${dataDir})`,
        `  Web UI: ${url}/ (sign in as ${user.email}, password ${user.password})`,
        `  SERVICE_BASE_URL=${url}`,
        `  SERVICE_PUBLIC_KEY=${keys.publicKey}`,
        `  SERVICE_SECRET_KEY=${keys.secretKey}`,
        `  OTLP endpoint: ${url}/api/public/otel/v1/traces (Authorization: Basic base64(public:secret))`,
        'Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
  }
  log.info({ url, mode: config.mode, propagationEnabled: jobs.propagationEnabled }, 'dev ready');
  await onShutdown({
    onSignal: () => jobs.beginShutdown(),
    cleanup: async () => {
      await app.close();
      await jobs.stop();
      mediaBlobs?.close();
      exportBlobs.close();
      await pool.end();
      await analytics.close();
      removeConnection();
      await pg.stop();
    },
  });
  return 0;
}
