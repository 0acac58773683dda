/**
 * Each process parses only what it reads: for every process of the registry, a bad value of each of
 * its variables is refused naming the variable, and a bad value of any other process's variable is
 * ignored. The docs' table of variables is the one the registry generates.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configDoc, PROCESS_SCHEMAS, withTable } from '../../scripts/config-table.ts';
import { BACKUP_S3_ENV } from '../../server/contract/backup.ts';
import { type Env, INGESTION_LOG_S3_ENV, S3_ENV, type S3EnvNames } from '../../server/contract/env.ts';
import { parseEnv } from '../../server/contract/env-schema.ts';
import { ConfigError } from '../../server/kernel/config/env.ts';
import { SERVER_PROCESSES, type ServerRole } from '../../server/kernel/config/processes.ts';
import { requiredEnvOf } from '../fixtures/required-env.ts';

/** A value refused wherever the variable is read, or why the variable has none. */
type Bad =
  | {
      value: string /** Refused only while this variable is unset (else accepted as given). */;
      unless?: string;
    }
  | { none: string };

const FREE_TEXT: Bad = { none: 'free text: any value is one' };

const s3Bad = (names: S3EnvNames): Record<string, Bad> => ({
  [names.bucket]: { value: 'Not_A_Bucket' },
  [names.prefix]: { value: '/media' },
  // A region is any text; it is refused only set without its bucket (it would be ignored).
  [names.region]: { value: 'eu-west-1', unless: names.bucket },
  [names.endpoint]: { value: 's3.example' },
  [names.forcePathStyle]: { value: 'yes' },
  // One of the pair alone: refused with or without the bucket.
  [names.accessKeyId]: { value: 'AKIA' },
  [names.secretAccessKey]: { value: 's' },
});

/** One bad value per variable of every process (a variable missing here fails the first test). */
const BAD: Record<string, Bad> = {
  SERVICE_RELEASE: { value: '5' },
  SERVICE_MIGRATION_V4_WRITE_MODE: { value: 'dul' },
  SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: { value: 'both' },
  SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: { value: 'yes' },
  SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: { value: 'on' },
  SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES: { value: '2' },
  SERVICE_EVENT_PROPAGATION_STUCK_THRESHOLD_MINUTES: { value: '0' },
  SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: { value: '3601' },
  SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: { value: '-1' },
  SERVICE_EVENT_PROPAGATION_CHUNK_ROWS: { value: '0' },
  DATABASE_URL: { none: 'free text (refused only missing where required: config.test.ts)' },
  REDIS_URL: { none: 'free text (refused only missing where required: config.test.ts)' },
  HOST: FREE_TEXT,
  PORT: { value: '1.5' },
  METRICS_PORT: { value: '0' },
  SERVICE_INGESTION_MAX_IN_FLIGHT: { value: '10001' },
  SERVICE_EXPORT_INTERVAL_SECONDS: { value: '0' },
  SERVICE_OPERATOR_OBJECT: { value: 'no-slash' },
  LOG_LEVEL: { value: 'loud' },
  SERVICE_SHUTDOWN_DRAIN_SECONDS: { value: '3601' },
  SERVICE_AUTO_MIGRATION_DISABLED: { value: 'maybe' },
  SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: { value: 'maybe' },
  POD_NAME: FREE_TEXT,
  SERVICE_JOB_NAME: FREE_TEXT,
  CLICKHOUSE_URL: { value: 'ftp://ch' },
  CLICKHOUSE_USER: FREE_TEXT,
  CLICKHOUSE_PASSWORD: { none: 'taken as given, blanks included (a password)' },
  CLICKHOUSE_DB: FREE_TEXT,
  COLUMNAR_CLUSTER_ENABLED: { value: 'yes' },
  COLUMNAR_CLUSTER_NAME: FREE_TEXT,
  COLUMNAR_USE_LIGHTWEIGHT_UPDATE: { value: 'yes' },
  CLICKHOUSE_REQUEST_TIMEOUT_SECONDS: { value: '0' },
  CLICKHOUSE_MAX_EXECUTION_TIME_SECONDS: { value: '86401' },
  SERVICE_S3_MEDIA_MAX_CONTENT_LENGTH: { value: '0' },
  SERVICE_S3_MEDIA_DOWNLOAD_URL_EXPIRY_SECONDS: { value: '604801' },
  ...s3Bad(S3_ENV.media),
  ...s3Bad(S3_ENV.export),
  ...s3Bad(BACKUP_S3_ENV),
  ...s3Bad(INGESTION_LOG_S3_ENV),
  SERVICE_TRUSTED_PROXIES: { value: 'maybe' },
  SERVICE_PUBLIC_URL: { value: 'ftp://ui.example' },
  AUTH_SESSION_MAX_AGE: { value: '5' },
  SERVICE_AUTH_SIGNIN_LIMIT_PER_ACCOUNT_ADDRESS: { value: '0' },
  SERVICE_AUTH_SIGNIN_LIMIT_PER_ADDRESS: { value: '100001' },
  ENCRYPTION_KEY: { value: 'hunter2' },
  SERVICE_LLM_CONNECTION_WHITELISTED_HOST: FREE_TEXT,
  SERVICE_LLM_CONNECTION_WHITELISTED_IPS: { value: 'not-an-ip' },
  SERVICE_BACKFILL_CHUNK_ROWS: { value: '0' },
  SERVICE_BACKFILL_THROTTLE_MS: { value: '-1' },
  SERVICE_BACKFILL_CONCURRENCY: { value: '17' },
  SERVICE_ALERT_TICK_SECONDS: { value: '0' },
  SERVICE_ALERT_RETRY_BASE_SECONDS: { value: '1.5' },
  SERVICE_INGESTION_LOG_WAIT_FOR_STORE: { value: 'yes' },
  SERVICE_INGESTION_BACKLOG_MAX_AGE_SECONDS: { value: '9' },
  SERVICE_INGESTION_BACKLOG_MAX_BYTES: { value: '1024' },
  SERVICE_INGESTION_LOG_RETENTION_HOURS: { value: '24' },
  SERVICE_INGESTION_LOG_DRAIN_LEASE_SECONDS: { value: '4' },
  SERVICE_OTLP_GRPC_PORT: { value: '65536' },
  // Either file alone: the listener needs both.
  SERVICE_OTLP_GRPC_TLS_CERT_FILE: { value: '/c.pem' },
  SERVICE_OTLP_GRPC_TLS_KEY_FILE: { value: '/k.pem' },
  OPERATOR_NAMESPACE: FREE_TEXT,
  OPERATOR_WATCH_NAMESPACE: FREE_TEXT,
  OPERATOR_LEADER_ELECTION: { value: 'yes' },
  OPERATOR_LEASE_NAME: FREE_TEXT,
  OPERATOR_HEALTH_PORT: { value: '0' },
  OPERATOR_METRICS_PORT: { value: '65536' },
  OPERATOR_BIND_ADDRESS: FREE_TEXT,
  OPERATOR_SECRET_ROLLOUTS: { value: 'maybe' },
};

const PROCESSES = Object.keys(PROCESS_SCHEMAS);
const EVERY_VARIABLE = [...new Set(PROCESSES.flatMap((p) => PROCESS_SCHEMAS[p]!.variables))];
const parse = (process: string, env: Env) => parseEnv(PROCESS_SCHEMAS[process]!.schema, env);

/** The bad value of `variable` for `process`, or why there is none. */
function badFor(process: string, variable: string): { value: string } | { none: string } {
  const bad = BAD[variable]!;
  if ('none' in bad) return bad;
  if (bad.unless !== undefined && requiredEnvOf(process)[bad.unless] !== undefined)
    return { none: `accepted as given while ${bad.unless} is set, which ${process} requires` };
  return bad;
}

describe('the table of bad values', () => {
  it('has an entry for every variable a process reads, and for no other', () => {
    expect(EVERY_VARIABLE.filter((v) => !(v in BAD))).toEqual([]);
    expect(Object.keys(BAD).filter((v) => !EVERY_VARIABLE.includes(v))).toEqual([]);
  });

  it('lists every server command of the registry, the analytics server and the operator', () => {
    expect(PROCESSES.sort()).toEqual(
      [...(Object.keys(SERVER_PROCESSES) as ServerRole[]), 'analytics-server', 'operator'].sort(),
    );
  });
});

const cases = PROCESSES.flatMap((process) =>
  EVERY_VARIABLE.map((variable) => {
    const reads = PROCESS_SCHEMAS[process]!.variables.includes(variable);
    return [process, reads ? 'refuses' : 'ignores', variable, badFor(process, variable)] as const;
  }),
);
const valued = cases.flatMap(([p, verb, v, bad]) =>
  'value' in bad ? [[p, verb, v, bad.value] as const] : [],
);
const anyValue = cases.flatMap(([p, , v, bad]) => ('none' in bad ? [[p, v, bad.none] as const] : []));
/** A value no check could take for its type: text where a number, boolean or URL would be. */
const ANY_TEXT = 'any text: 42 / yes';

describe.each(PROCESSES)('%s', (process) => {
  it('starts on its required variables alone', () => {
    expect(() => parse(process, requiredEnvOf(process))).not.toThrow();
  });

  it.each(valued.filter(([p]) => p === process))('%s %s %s=%s', (_, verb, variable, value) => {
    const load = () => parse(process, { ...requiredEnvOf(process), [variable]: value });
    if (verb === 'ignores') {
      expect(load).not.toThrow();
      return;
    }
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(variable);
  });

  // A variable without a bad value (free text, or one accepted as given here) starts on any text.
  it.each(anyValue.filter(([p]) => p === process))('%s accepts any %s (%s)', (_, variable) => {
    expect(() => parse(process, { ...requiredEnvOf(process), [variable]: ANY_TEXT })).not.toThrow();
  });
});

describe('the docs’ table of variables', () => {
  it('is the one the processes’ schemas generate (node scripts/config-table.ts writes it)', () => {
    const doc = readFileSync(configDoc, 'utf8');
    expect(doc).toBe(withTable(doc));
  });
});
