/**
 * One configuration schema per process of the server: the parts (env.ts) each reads and the
 * variables it cannot start without. A process refuses a bad value of its own variables and leaves
 * every other alone. The one module of the server that reads `process.env`.
 */
import { z } from 'zod';
import { BACKUP_S3_ENV } from '../../contract/backup.ts';
import { ENV, type Env, INGESTION_LOG_S3_ENV } from '../../contract/env.ts';
import { parseEnv, required, variablesOf } from '../../contract/env-schema.ts';
import {
  type AnalyticsServerConfig,
  analyticsServerSchema,
  composeConfig,
  type PartName,
  type ServiceConfig,
} from './env.ts';

/** The variables a process needs named. */
type RequiredName =
  | typeof ENV.databaseUrl
  | typeof ENV.clickhouseUrl
  | typeof ENV.redisUrl
  | typeof INGESTION_LOG_S3_ENV.bucket
  | typeof BACKUP_S3_ENV.bucket;

interface ProcessParts {
  parts: readonly PartName[];
  require: readonly RequiredName[];
}

const DB = ENV.databaseUrl;
const CH = ENV.clickhouseUrl;
/** What a command that runs against both databases reads (its schema version, the dialect). */
const STORES = ['mode', 'relational', 'analytics'] as const satisfies PartName[];
/** What a command that writes the relational database alone reads (its migrations per release). */
const RELATIONAL = ['mode', 'relational'] as const satisfies PartName[];
const BACKUP = [...STORES, 'backupBucket'] as const satisfies PartName[];
/** What the worker's jobs read, in the worker and in `dev`. */
const WORKER_JOBS = [
  'propagationWatch',
  'propagation',
  'alerts',
  'backfill',
  'backfillInWorker',
  'identity',
] as const satisfies PartName[];

/** Each server process (a CLI command) and what it reads; `dev` brings its own embedded databases. */
export const SERVER_PROCESSES = {
  web: {
    parts: [
      ...STORES,
      'logging',
      'redis',
      'webListeners',
      'otlpGrpc',
      'shutdown',
      'autoMigration',
      'mediaBucket',
      'mediaUploads',
      'exportBucket',
      'ingestionLogBucket',
      'ingestionLogWrites',
      'signIn',
      'publicUrl',
      'llm',
      'operatorObject',
      'propagationWatch',
    ],
    require: [DB, CH],
  },
  worker: {
    parts: [
      ...STORES,
      'logging',
      'redis',
      'listener',
      'shutdown',
      'mediaBucket',
      'exportBucket',
      'exportSchedule',
      'ingestionLogBucket',
      'ingestionLogRetention',
      'ingestionLogDrain',
      'publicUrl',
      'llm',
      ...WORKER_JOBS,
    ],
    require: [DB, CH, ENV.redisUrl],
  },
  /** The web and the worker's jobs in one process, without the ingestion log (it opens none). */
  dev: {
    parts: [
      'mode',
      'analytics',
      'logging',
      'host',
      'mediaBucket',
      'mediaUploads',
      'exportBucket',
      'exportSchedule',
      'signIn',
      'publicUrl',
      'llm',
      'operatorObject',
      ...WORKER_JOBS,
    ],
    require: [],
  },
  migrate: { parts: [...STORES, 'job'], require: [DB, CH] },
  backfill: { parts: [...STORES, 'backfill', 'identity'], require: [DB, CH] },
  preflight: { parts: [...STORES, 'redis', 'job'], require: [DB, CH] },
  cleanup: { parts: [...STORES, 'job'], require: [DB, CH] },
  backup: { parts: BACKUP, require: [DB, CH, BACKUP_S3_ENV.bucket] },
  /** A restore replays the ingestion log's writes the backup lacks, as far back as it keeps them. */
  restore: {
    parts: [...BACKUP, 'ingestionLogBucket', 'ingestionLogRetention'],
    require: [DB, CH, BACKUP_S3_ENV.bucket],
  },
  'backup-prune': { parts: ['backupBucket'], require: [BACKUP_S3_ENV.bucket] },
  'backup-verify': { parts: BACKUP, require: [DB, CH, BACKUP_S3_ENV.bucket] },
  producers: { parts: ['relational'], require: [DB] },
  models: { parts: RELATIONAL, require: [DB] },
  'recompute-costs': { parts: STORES, require: [DB, CH] },
  ingestion: { parts: [...STORES, 'ingestionLogBucket'], require: [DB, CH, INGESTION_LOG_S3_ENV.bucket] },
  'create-project': { parts: RELATIONAL, require: [DB] },
  'create-user': { parts: RELATIONAL, require: [DB] },
  'create-org-key': { parts: RELATIONAL, require: [DB] },
} as const satisfies Record<string, ProcessParts>;
export type ServerRole = keyof typeof SERVER_PROCESSES;

const requiredSchema = (names: readonly RequiredName[]) =>
  z.object(Object.fromEntries(names.map((name) => [name, required()]))).transform(() => ({}));

const roleSchema = ({ parts, require }: ProcessParts): z.ZodType<ServiceConfig> =>
  composeConfig(parts).and(requiredSchema(require));

/** One server process's configuration from an environment. */
export const loadRoleConfig = (role: ServerRole, env: Env): ServiceConfig =>
  parseEnv(roleSchema(SERVER_PROCESSES[role]), env);

/** A process's schema and the variables it reads (what the docs' table and its tests are made from). */
export interface ProcessSchema {
  schema: z.ZodType<unknown>;
  variables: readonly string[];
}

export const processSchema = (schema: z.ZodType<unknown>): ProcessSchema => ({
  schema,
  variables: variablesOf(schema),
});

/**
 * Every process of the server by its command's name (the operator's is operator/config.ts). A
 * function: only the docs' table and the tests need every schema, so no process builds them at start.
 */
export const serverSchemas = (): Record<ServerRole | 'analytics-server', ProcessSchema> => ({
  ...(Object.fromEntries(
    Object.entries(SERVER_PROCESSES).map(([role, p]) => [role, processSchema(roleSchema(p))]),
  ) as Record<ServerRole, ProcessSchema>),
  'analytics-server': processSchema(analyticsServerSchema),
});

export interface ProcessConfigOptions {
  /** Values used where the process environment leaves a variable unset (e.g. `dev` binds 127.0.0.1). */
  defaults?: Env;
  /** Values that replace the process environment's (e.g. `dev`'s embedded analytics store). */
  overrides?: Env;
}

/** The configuration of this process, from `process.env`: what each command's entry calls once. */
export function processConfig(role: ServerRole, opts: ProcessConfigOptions = {}): ServiceConfig {
  return loadRoleConfig(role, { ...opts.defaults, ...process.env, ...opts.overrides });
}

export const analyticsServerProcessConfig = (): AnalyticsServerConfig =>
  parseEnv(analyticsServerSchema, process.env);

/**
 * The environment a tool this process runs inherits (pg_dump, pg_restore: PATH, locale, TLS
 * settings), not read as configuration.
 */
export const toolEnv = (): NodeJS.ProcessEnv => ({ ...process.env });
