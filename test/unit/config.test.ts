import { describe, expect, it } from 'vitest';
import { loadOperatorConfig, type OperatorConfig } from '../../operator/config.ts';
import { BACKUP_S3_ENV } from '../../server/contract/backup.ts';
import {
  AUTH_ENV,
  ENV,
  INGESTION_LOG_ENV,
  INGESTION_LOG_S3_ENV,
  LIFECYCLE_ENV,
  LLM_ENV,
  OPERATOR_ENV,
  OTLP_GRPC_ENV,
  S3_ENV,
  type S3EnvNames,
} from '../../server/contract/env.ts';
import { behaviourOf, otelTargets, V4_DEFAULTS } from '../../server/contract/write-modes.ts';
import type { S3Settings } from '../../server/kernel/config/blob-storage.ts';
import {
  ConfigError,
  loadAnalyticsServerConfig,
  loadConfig,
  type ServiceConfig,
} from '../../server/kernel/config/env.ts';
import {
  loadRoleConfig,
  SERVER_PROCESSES,
  type ServerRole,
  serverSchemas,
} from '../../server/kernel/config/processes.ts';
import { requiredEnvOf } from '../fixtures/required-env.ts';

const MODE = 'SERVICE_MIGRATION_V4_WRITE_MODE';
const OTEL = 'SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR';
const PREVIEW = 'SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN';
const BACKFILL = 'SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL';

const modes = [undefined, 'legacy', 'dual', 'events_only'] as const;
const otels = [undefined, 'dual_write', 'direct'] as const;
const bools = [undefined, 'true', 'false'] as const;

/** The rules restated independently of the implementation, to check it over every combination. */
function expectedProblems(
  mode = 'events_only',
  otel = 'direct',
  preview = 'true',
  backfill = 'true',
): string[] {
  const p: string[] = [];
  if (mode === 'events_only' && otel !== 'direct') p.push(`${MODE}=events_only requires ${OTEL}=direct`);
  if (mode === 'events_only' && preview !== 'true') p.push(`${MODE}=events_only requires ${PREVIEW}=true`);
  if (mode === 'legacy' && backfill === 'true') p.push(`${MODE}=legacy requires ${BACKFILL}=false`);
  return p;
}

describe('configuration combinations (release 4)', () => {
  const cases = modes.flatMap((m) =>
    otels.flatMap((o) => bools.flatMap((p) => bools.map((b) => [m, o, p, b] as const))),
  );
  it.each(cases)('mode=%s otel=%s preview=%s backfill=%s', (m, o, p, b) => {
    const env = { [MODE]: m, [OTEL]: o, [PREVIEW]: p, [BACKFILL]: b };
    const problems = expectedProblems(m, o, p, b);
    if (problems.length === 0) {
      expect(loadConfig(env).mode.writeMode).toBe(m ?? 'events_only');
      return;
    }
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    for (const problem of problems) expect(message).toContain(problem);
  });
});

describe('configuration values', () => {
  it('defaults to the version 4 target state', () => {
    const c = loadConfig({});
    expect({ ...c.mode, release: undefined }).toEqual({ ...V4_DEFAULTS, release: undefined });
    expect(c.propagationStuckThresholdMinutes).toBe(15);
  });

  it.each([
    [{ [MODE]: 'dul' }, `${MODE}=dul is not one of legacy|dual|events_only`],
    [{ [OTEL]: 'both' }, `${OTEL}=both is not one of dual_write|direct`],
    [{ [PREVIEW]: 'yes' }, `${PREVIEW}=yes is not one of true|false`],
    [
      { SERVICE_EVENT_PROPAGATION_STUCK_THRESHOLD_MINUTES: '0' },
      'SERVICE_EVENT_PROPAGATION_STUCK_THRESHOLD_MINUTES=0',
    ],
    [{ SERVICE_RELEASE: '5' }, 'SERVICE_RELEASE=5 is not one of 3|4'],
    [{ SERVICE_RELEASE: '3', [MODE]: 'dual' }, `SERVICE_RELEASE=3 supports only ${MODE}=legacy`],
    [{ CLICKHOUSE_URL: 'tcp://x' }, 'CLICKHOUSE_URL must start with'],
    [{ SERVICE_OPERATOR_OBJECT: 'demo' }, 'SERVICE_OPERATOR_OBJECT must be <namespace>/<name>'],
    [{ SERVICE_OPERATOR_OBJECT: 'ns/Demo' }, 'SERVICE_OPERATOR_OBJECT must be <namespace>/<name>'],
    [{ SERVICE_OPERATOR_OBJECT: 'a/b/c' }, 'SERVICE_OPERATOR_OBJECT must be <namespace>/<name>'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    [{ METRICS_PORT: 'x' }, 'METRICS_PORT'],
    [{ PORT: '3000', METRICS_PORT: '3000' }, 'METRICS_PORT must differ from PORT'],
    [
      { SERVICE_ALERT_TICK_SECONDS: '0' },
      'SERVICE_ALERT_TICK_SECONDS=0 is not an integer between 1 and 3600',
    ],
    [{ SERVICE_ALERT_RETRY_BASE_SECONDS: '1.5' }, 'SERVICE_ALERT_RETRY_BASE_SECONDS=1.5 is not an integer'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('names missing required variables without printing secrets', () => {
    const env = { CLICKHOUSE_URL: 'http://u:hunter2@h:8123', CLICKHOUSE_PASSWORD: 'hunter2', [MODE]: 'bad' };
    expect(() => loadRoleConfig('migrate', env)).toThrow('DATABASE_URL is required');
    expect(() => loadRoleConfig('migrate', env)).not.toThrow('hunter2');
  });

  it('reads the alert timing, small for tests', () => {
    expect(loadConfig({}).alerts).toEqual({ tickSeconds: 15, retryBaseSeconds: 30 });
    expect(
      loadConfig({ SERVICE_ALERT_TICK_SECONDS: '1', SERVICE_ALERT_RETRY_BASE_SECONDS: '2' }).alerts,
    ).toEqual({ tickSeconds: 1, retryBaseSeconds: 2 });
  });

  it('knows the ObservabilityService an operator runs it for', () => {
    expect(loadConfig({ SERVICE_OPERATOR_OBJECT: 'observability/obs-1' }).operatorObject).toEqual({
      namespace: 'observability',
      name: 'obs-1',
    });
    expect(loadConfig({}).operatorObject).toBeUndefined();
  });

  it('release 3 behaves as version 3: legacy only, no version 4 reads', () => {
    const c = loadConfig({ SERVICE_RELEASE: '3' });
    expect(behaviourOf(c.mode)).toMatchObject({ writesEventsTables: false, servesV4Reads: false });
  });
});

describe('OTLP write targets', () => {
  const dual = {
    ...V4_DEFAULTS,
    release: '4' as const,
    writeMode: 'dual' as const,
    nativeOtelBehaviour: 'dual_write' as const,
  };
  it.each([
    [false, { legacy: true, staging: true, events: false }],
    [true, { legacy: true, staging: false, events: true }],
  ])('dual with dual_write, real-time producer %s', (realTime, targets) => {
    expect(otelTargets(dual, realTime)).toEqual(targets);
  });
  it('dual with direct writes every producer directly', () => {
    expect(otelTargets({ ...dual, nativeOtelBehaviour: 'direct' }, false)).toEqual({
      legacy: true,
      staging: false,
      events: true,
    });
  });
  it('legacy ignores the header; events_only always writes directly', () => {
    expect(otelTargets({ ...dual, writeMode: 'legacy' }, true)).toEqual({
      legacy: true,
      staging: false,
      events: false,
    });
    expect(otelTargets({ ...dual, writeMode: 'events_only', nativeOtelBehaviour: 'direct' }, false)).toEqual({
      legacy: false,
      staging: false,
      events: true,
    });
  });
});

describe('sign-in and session settings', () => {
  it('defaults: no trusted proxy, no public URL, 7-day sessions, 5 per (account, address), 100 per address', () => {
    const a = loadConfig({}).auth;
    expect(a).toEqual({
      trustedProxies: false,
      publicUrl: undefined,
      sessionMaxAgeMinutes: 10_080,
      signInLimitPerAccountAddress: 5,
      signInLimitPerAddress: 100,
    });
  });

  it.each([
    ['SERVICE_TRUSTED_PROXIES', 'true', { trustedProxies: true }],
    ['SERVICE_TRUSTED_PROXIES', '2', { trustedProxies: 2 }],
    [
      'SERVICE_TRUSTED_PROXIES',
      '10.0.0.0/8, 127.0.0.1,::1',
      { trustedProxies: ['10.0.0.0/8', '127.0.0.1', '::1'] },
    ],
    ['SERVICE_PUBLIC_URL', 'https://obs.example.com', { publicUrl: new URL('https://obs.example.com') }],
    ['AUTH_SESSION_MAX_AGE', '60', { sessionMaxAgeMinutes: 60 }],
    ['SERVICE_AUTH_SIGNIN_LIMIT_PER_ADDRESS', '20', { signInLimitPerAddress: 20 }],
  ])('%s=%s', (name, value, expected) => expect(loadConfig({ [name]: value }).auth).toMatchObject(expected));

  it.each([
    ['SERVICE_TRUSTED_PROXIES', 'anyone'],
    ['SERVICE_TRUSTED_PROXIES', '10.0.0.0/33'],
    ['SERVICE_TRUSTED_PROXIES', '0'],
    ['SERVICE_PUBLIC_URL', 'obs.example.com'],
    ['SERVICE_PUBLIC_URL', 'ftp://obs.example.com'],
    ['SERVICE_PUBLIC_URL', 'https://obs.example.com/ui'],
    ['AUTH_SESSION_MAX_AGE', '1'],
    ['AUTH_SESSION_MAX_AGE', '1.5'],
    ['SERVICE_AUTH_SIGNIN_LIMIT_PER_ACCOUNT_ADDRESS', '0'],
  ])('refuses %s=%s in one line naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(
      new RegExp(`^invalid configuration: ${name}=\\S+ is not [^\\n]+$`),
    );
  });
});

const HEX_KEY = 'ab'.repeat(32);
const ROLES = Object.keys(SERVER_PROCESSES) as ServerRole[];
const BACKUP_ROLES: readonly ServerRole[] = ['backup', 'restore', 'backup-prune', 'backup-verify'];
const s3Cases = (names: S3EnvNames, read: (c: ServiceConfig) => S3Settings | undefined): VariableCase[] => [
  {
    name: names.bucket,
    bad: 'Not_A_Bucket',
    good: 'media-1',
    read: (c) => read(c)?.bucket,
    expected: 'media-1',
  },
  // Without the bucket, any other setting of the purpose is refused: it would be ignored.
  { name: names.prefix, bad: 'media/', good: undefined, read: (c) => read(c), expected: undefined },
  { name: names.region, bad: 'eu-west-1', good: undefined, read: (c) => read(c), expected: undefined },
  { name: names.endpoint, bad: 'http://s3:9000', good: undefined, read: (c) => read(c), expected: undefined },
  { name: names.forcePathStyle, bad: 'yes', good: 'true', read: (c) => read(c), expected: undefined },
  { name: names.accessKeyId, bad: 'AKIA', good: undefined, read: (c) => read(c), expected: undefined },
  { name: names.secretAccessKey, bad: 's', good: undefined, read: (c) => read(c), expected: undefined },
];

interface VariableCase {
  name: string;
  /** The roles the case holds for (default every role that reads the variable). */
  roles?: readonly ServerRole[];
  /** A value refused (undefined: every value is accepted as given). */
  bad: string | undefined;
  good: string | undefined;
  read: (c: ServiceConfig) => unknown;
  expected: unknown;
}

/** Every variable a server role reads: a refused value, and an accepted one with what it becomes. */
const SERVER_VARIABLES: VariableCase[] = [
  { name: ENV.release, bad: '5', good: '3', read: (c) => c.mode.release, expected: '3' },
  {
    name: ENV.writeMode,
    bad: 'dul',
    good: 'events_only',
    read: (c) => c.mode.writeMode,
    expected: 'events_only',
  },
  {
    name: ENV.nativeOtelBehaviour,
    bad: 'both',
    good: 'direct',
    read: (c) => c.mode.nativeOtelBehaviour,
    expected: 'direct',
  },
  {
    name: ENV.allowPreviewOptIn,
    bad: 'yes',
    good: 'true',
    read: (c) => c.mode.allowPreviewOptIn,
    expected: true,
  },
  {
    name: ENV.enableHistoricBackfill,
    bad: 'on',
    good: 'false',
    read: (c) => c.mode.enableHistoricBackfill,
    expected: false,
  },
  {
    name: ENV.dropPidTidSortingTables,
    bad: '2',
    good: 'true',
    read: (c) => c.mode.dropPidTidSortingTables,
    expected: true,
  },
  {
    name: ENV.propagationStuckThresholdMinutes,
    bad: '0',
    good: '20',
    read: (c) => c.propagationStuckThresholdMinutes,
    expected: 20,
  },
  {
    name: ENV.propagationIntervalSeconds,
    bad: '3601',
    good: '5',
    read: (c) => c.propagationIntervalSeconds,
    expected: 5,
  },
  {
    name: ENV.propagationGraceSeconds,
    bad: '-1',
    good: '0',
    read: (c) => c.propagationGraceSeconds,
    expected: 0,
  },
  {
    name: ENV.propagationChunkRows,
    bad: '0',
    good: '1000',
    read: (c) => c.propagationChunkRows,
    expected: 1000,
  },
  {
    name: ENV.columnarClusterEnabled,
    bad: 'yes',
    good: 'true',
    read: (c) => c.clickhouse.clusterEnabled,
    expected: true,
  },
  {
    name: ENV.columnarClusterName,
    bad: undefined,
    good: 'c1',
    read: (c) => c.clickhouse.clusterName,
    expected: 'c1',
  },
  {
    name: ENV.columnarUseLightweightUpdate,
    bad: 'maybe',
    good: '1',
    read: (c) => c.clickhouse.useLightweightUpdate,
    expected: true,
  },
  {
    name: ENV.databaseUrl,
    bad: undefined,
    good: 'postgres://db/x',
    read: (c) => c.databaseUrl,
    expected: 'postgres://db/x',
  },
  {
    name: ENV.redisUrl,
    bad: undefined,
    good: 'redis://r:6379',
    read: (c) => c.redisUrl,
    expected: 'redis://r:6379',
  },
  {
    name: ENV.clickhouseUrl,
    bad: 'tcp://x',
    good: 'https://ch:8443',
    read: (c) => c.clickhouse.url,
    expected: 'https://ch:8443',
  },
  { name: ENV.clickhouseUser, bad: undefined, good: 'u', read: (c) => c.clickhouse.user, expected: 'u' },
  {
    name: ENV.clickhousePassword,
    bad: undefined,
    good: 'p w',
    read: (c) => c.clickhouse.password,
    expected: 'p w',
  },
  {
    name: ENV.clickhouseDb,
    bad: undefined,
    good: 'obs',
    read: (c) => c.clickhouse.database,
    expected: 'obs',
  },
  { name: ENV.host, bad: undefined, good: '127.0.0.1', read: (c) => c.host, expected: '127.0.0.1' },
  { name: ENV.port, bad: '65536', good: '8000', read: (c) => c.port, expected: 8000 },
  { name: ENV.metricsPort, bad: 'x', good: '9100', read: (c) => c.metricsPort, expected: 9100 },
  { name: ENV.maxInFlightWrites, bad: '0', good: '8', read: (c) => c.maxInFlightWrites, expected: 8 },
  {
    name: ENV.autoMigrationDisabled,
    bad: 'yes',
    good: 'true',
    read: (c) => c.autoMigrationDisabled,
    expected: true,
  },
  {
    name: ENV.backgroundMigrationsInWorker,
    bad: 'no',
    good: 'false',
    read: (c) => c.backgroundMigrationsInWorker,
    expected: false,
  },
  { name: ENV.podName, bad: undefined, good: 'web-0', read: (c) => c.podName, expected: 'web-0' },
  {
    name: ENV.jobName,
    bad: undefined,
    good: 'obs-migrate-1a2b',
    read: (c) => c.jobName,
    expected: 'obs-migrate-1a2b',
  },
  { name: ENV.logLevel, bad: 'verbose', good: 'debug', read: (c) => c.logLevel, expected: 'debug' },
  {
    name: ENV.operatorObject,
    bad: 'demo',
    good: 'ns/obs',
    read: (c) => c.operatorObject,
    expected: { namespace: 'ns', name: 'obs' },
  },
  {
    name: ENV.mediaMaxContentLength,
    bad: '0',
    good: '10',
    read: (c) => c.media.maxContentLength,
    expected: 10,
  },
  {
    name: ENV.exportIntervalSeconds,
    bad: '86401',
    good: '30',
    read: (c) => c.exportIntervalSeconds,
    expected: 30,
  },
  {
    name: ENV.mediaDownloadUrlExpirySeconds,
    bad: '604801',
    good: '60',
    read: (c) => c.media.downloadUrlExpirySeconds,
    expected: 60,
  },
  {
    name: LIFECYCLE_ENV.shutdownDrainSeconds,
    bad: 'abc',
    good: '0',
    read: (c) => c.shutdownDrainSeconds,
    expected: 0,
  },
  {
    name: LLM_ENV.encryptionKey,
    bad: 'abc',
    good: HEX_KEY,
    read: (c) => c.llm.encryptionKey?.toString('hex'),
    expected: HEX_KEY,
  },
  {
    name: LLM_ENV.llmConnectionWhitelistedHosts,
    bad: undefined,
    good: 'A.example, b',
    read: (c) => c.llm.whitelistedHosts,
    expected: ['a.example', 'b'],
  },
  {
    name: LLM_ENV.llmConnectionWhitelistedIps,
    bad: '10.0.0.1,host',
    good: '10.0.0.1',
    read: (c) => c.llm.whitelistedIps,
    expected: ['10.0.0.1'],
  },
  {
    name: AUTH_ENV.trustedProxies,
    bad: 'anyone',
    good: '1',
    read: (c) => c.auth.trustedProxies,
    expected: 1,
  },
  {
    name: AUTH_ENV.publicUrl,
    bad: 'obs.example.com',
    good: 'https://o.example',
    read: (c) => c.auth.publicUrl?.href,
    expected: 'https://o.example/',
  },
  {
    name: AUTH_ENV.sessionMaxAgeMinutes,
    bad: '5',
    good: '6',
    read: (c) => c.auth.sessionMaxAgeMinutes,
    expected: 6,
  },
  {
    name: AUTH_ENV.signInLimitPerAccountAddress,
    bad: '0',
    good: '3',
    read: (c) => c.auth.signInLimitPerAccountAddress,
    expected: 3,
  },
  {
    name: AUTH_ENV.signInLimitPerAddress,
    bad: '100001',
    good: '7',
    read: (c) => c.auth.signInLimitPerAddress,
    expected: 7,
  },
  ...s3Cases(S3_ENV.media, (c) => c.media.s3),
  ...s3Cases(S3_ENV.export, (c) => c.exportStorage),
  // The backup Jobs require the destination's bucket and read the rest (no other role reads them).
  ...backupCases(),
  // The ingestion log: optional for the web and the worker, required by `ingestion replay`.
  ...s3Cases(INGESTION_LOG_S3_ENV, (c) => c.ingestionLog.s3).map((v) => ({
    ...v,
    roles: ROLES.filter((r) => r !== 'ingestion'),
  })),
  {
    name: INGESTION_LOG_S3_ENV.bucket,
    roles: ['ingestion'],
    bad: 'Not_A_Bucket',
    good: 'log-1',
    read: (c) => c.ingestionLog.s3?.bucket,
    expected: 'log-1',
  },
  {
    name: INGESTION_LOG_ENV.waitForStore,
    bad: 'yes',
    good: 'true',
    read: (c) => c.ingestionLog.waitForStore,
    expected: true,
  },
  {
    name: INGESTION_LOG_ENV.backlogMaxAgeSeconds,
    bad: '5',
    good: '600',
    read: (c) => c.ingestionLog.backlogMaxAgeSeconds,
    expected: 600,
  },
  {
    name: INGESTION_LOG_ENV.backlogMaxBytes,
    bad: '1000',
    good: '2097152',
    read: (c) => c.ingestionLog.backlogMaxBytes,
    expected: 2097152,
  },
  // Not below the sweeper's day: a file it could queue again is never one retention deleted.
  {
    name: INGESTION_LOG_ENV.retentionHours,
    bad: '24',
    good: '48',
    read: (c) => c.ingestionLog.retentionHours,
    expected: 48,
  },
  {
    name: INGESTION_LOG_ENV.drainLeaseSeconds,
    bad: '1',
    good: '10',
    read: (c) => c.ingestionLog.drainLeaseSeconds,
    expected: 10,
  },
  // The web's OTLP/gRPC port: 0 turns it off; TLS takes the certificate and key together.
  {
    name: OTLP_GRPC_ENV.port,
    bad: '65536',
    good: '0',
    read: (c) => c.otlpGrpc.port,
    expected: undefined,
  },
  {
    name: OTLP_GRPC_ENV.tlsCertFile,
    bad: '/tls/cert.pem',
    good: undefined,
    read: (c) => c.otlpGrpc.tls,
    expected: undefined,
  },
  {
    name: OTLP_GRPC_ENV.tlsKeyFile,
    bad: '/tls/key.pem',
    good: undefined,
    read: (c) => c.otlpGrpc.tls,
    expected: undefined,
  },
];

function backupCases(): VariableCase[] {
  const roles = BACKUP_ROLES;
  const read = (c: ServiceConfig) => c.backupStorage;
  return [
    {
      name: BACKUP_S3_ENV.bucket,
      roles,
      bad: 'Not_A_Bucket',
      good: 'b-1',
      read: (c) => read(c)?.bucket,
      expected: 'b-1',
    },
    {
      name: BACKUP_S3_ENV.prefix,
      roles,
      bad: '/obs/',
      good: 'obs/',
      read: (c) => read(c)?.prefix,
      expected: 'obs/',
    },
    {
      name: BACKUP_S3_ENV.region,
      roles,
      bad: undefined,
      good: 'eu-west-1',
      read: (c) => read(c)?.region,
      expected: 'eu-west-1',
    },
    {
      name: BACKUP_S3_ENV.endpoint,
      roles,
      bad: 's3:9000',
      good: 'http://s3:9000',
      read: (c) => read(c)?.endpoint,
      expected: 'http://s3:9000',
    },
    {
      name: BACKUP_S3_ENV.forcePathStyle,
      roles,
      bad: 'yes',
      good: 'true',
      read: (c) => read(c)?.forcePathStyle,
      expected: true,
    },
    // One of the pair alone is refused: both or neither (the SDK's default chain).
    {
      name: BACKUP_S3_ENV.accessKeyId,
      roles,
      bad: 'AKIA',
      good: undefined,
      read: (c) => read(c)?.credentials,
      expected: undefined,
    },
    {
      name: BACKUP_S3_ENV.secretAccessKey,
      roles,
      bad: 's',
      good: undefined,
      read: (c) => read(c)?.credentials,
      expected: undefined,
    },
  ];
}

const SERVER_SCHEMAS = serverSchemas();
/** The cases of the variables `role` reads (those it does not read: config-per-process.test.ts). */
const forRole = (role: ServerRole) => (v: VariableCase) =>
  SERVER_SCHEMAS[role].variables.includes(v.name) && (v.roles === undefined || v.roles.includes(role));

/** Runs `load`, returning the ConfigError's message (fails when it does not throw one). */
function refusal(load: () => unknown): string {
  try {
    load();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('accepted');
}

describe('every variable of every server role', () => {
  it('the table names every variable the contract declares for the server', () => {
    const declared = [
      ...Object.values(ENV),
      ...Object.values(LIFECYCLE_ENV),
      ...Object.values(LLM_ENV),
      ...Object.values(AUTH_ENV),
      ...Object.values(S3_ENV).flatMap((names) => Object.values(names)),
      ...Object.values(BACKUP_S3_ENV),
      ...Object.values(INGESTION_LOG_S3_ENV),
      ...Object.values(INGESTION_LOG_ENV),
      ...Object.values(OTLP_GRPC_ENV),
    ];
    expect([...new Set(SERVER_VARIABLES.map((v) => v.name))].sort()).toEqual([...new Set(declared)].sort());
  });

  const refused = ROLES.flatMap((role) =>
    SERVER_VARIABLES.filter(forRole(role))
      .filter((v) => v.bad !== undefined)
      .map((v) => [role, v.name, v.bad!] as const),
  );
  it.each(refused)('%s refuses %s=%s in one line naming it', (role, name, bad) => {
    const message = refusal(() => loadRoleConfig(role, { ...requiredEnvOf(role), [name]: bad }));
    expect(message).toMatch(/^invalid configuration: [^\n]+$/);
    expect(message).toContain(name);
  });

  const accepted = ROLES.flatMap((role) =>
    SERVER_VARIABLES.filter(forRole(role)).map((v) => [role, v.name, v.good, v] as const),
  );
  it.each(accepted)('%s reads %s=%s', (role, name, good, v) => {
    expect(v.read(loadRoleConfig(role, { ...requiredEnvOf(role), [name]: good }))).toEqual(v.expected);
  });

  const required = ROLES.flatMap((role) =>
    SERVER_PROCESSES[role].require.map((name) => [role, name] as const),
  );
  it.each(required)('%s names %s when it is missing', (role, name) => {
    expect(refusal(() => loadRoleConfig(role, { ...requiredEnvOf(role), [name]: undefined }))).toBe(
      `invalid configuration: ${name} is required`,
    );
  });
});

describe('analytics-server', () => {
  it.each([
    [{}, { user: undefined, password: undefined }],
    [
      { CLICKHOUSE_USER: 'u', CLICKHOUSE_PASSWORD: 'p' },
      { user: 'u', password: 'p' },
    ],
    [
      { CLICKHOUSE_USER: '', CLICKHOUSE_PASSWORD: '' },
      { user: undefined, password: undefined },
    ],
  ])('reads the credentials it accepts from %j (any value is one)', (env, expected) => {
    expect(loadAnalyticsServerConfig(env)).toEqual(expected);
  });
});

interface OperatorCase {
  name: string;
  bad: string | undefined;
  good: string;
  read: (c: OperatorConfig) => unknown;
  expected: unknown;
}

const OPERATOR_VARIABLES: OperatorCase[] = [
  {
    name: OPERATOR_ENV.namespace,
    bad: undefined,
    good: 'ops',
    read: (c) => c.leaseNamespace,
    expected: 'ops',
  },
  {
    name: OPERATOR_ENV.watchNamespace,
    bad: undefined,
    good: 'apps',
    read: (c) => [c.watchNamespace, c.leaseNamespace],
    expected: ['apps', 'apps'],
  },
  {
    name: OPERATOR_ENV.leaderElection,
    bad: 'off',
    good: 'false',
    read: (c) => c.leaderElection,
    expected: false,
  },
  {
    name: OPERATOR_ENV.leaseName,
    bad: undefined,
    good: 'lease-1',
    read: (c) => c.leaseName,
    expected: 'lease-1',
  },
  { name: OPERATOR_ENV.healthPort, bad: 'abc', good: '9091', read: (c) => c.healthPort, expected: 9091 },
  { name: OPERATOR_ENV.metricsPort, bad: '0', good: '9090', read: (c) => c.metricsPort, expected: 9090 },
  {
    name: OPERATOR_ENV.bindAddress,
    bad: undefined,
    good: '127.0.0.1',
    read: (c) => c.bindAddress,
    expected: '127.0.0.1',
  },
  {
    name: OPERATOR_ENV.secretRollouts,
    bad: 'no',
    good: 'false',
    read: (c) => c.secretRollouts,
    expected: false,
  },
  { name: ENV.logLevel, bad: 'verbose', good: 'warn', read: (c) => c.logLevel, expected: 'warn' },
  { name: ENV.podName, bad: undefined, good: 'operator-0', read: (c) => c.identity, expected: 'operator-0' },
  { name: ENV.host, bad: undefined, good: '10.0.0.2', read: (c) => c.bindAddress, expected: '10.0.0.2' },
];

describe('every variable of the operator', () => {
  it('the table names every variable the contract declares for it', () => {
    const names = OPERATOR_VARIABLES.map((v) => v.name);
    for (const name of Object.values(OPERATOR_ENV)) expect(names).toContain(name);
  });

  it('defaults: leader election and Secret rollouts on, health 8081, metrics 8080, Lease in default', () => {
    expect(loadOperatorConfig({})).toMatchObject({
      watchNamespace: '',
      leaseNamespace: 'default',
      leaderElection: true,
      leaseName: 'observatory-operator',
      healthPort: 8081,
      metricsPort: 8080,
      bindAddress: undefined,
      secretRollouts: true,
      logLevel: 'info',
    });
  });

  it.each(OPERATOR_VARIABLES.filter((v) => v.bad !== undefined).map((v) => [v.name, v.bad!] as const))(
    'refuses %s=%s in one line naming it',
    (name, bad) => {
      const message = refusal(() => loadOperatorConfig({ [name]: bad }));
      expect(message).toMatch(/^invalid configuration: [^\n]+$/);
      expect(message).toContain(name);
    },
  );

  it.each(OPERATOR_VARIABLES.map((v) => [v.name, v.good, v] as const))('reads %s=%s', (name, good, v) => {
    expect(v.read(loadOperatorConfig({ [name]: good }))).toEqual(v.expected);
  });
});

describe('the one line of a refusal', () => {
  it('names every refused variable once, showing a judged value and hiding a secret', () => {
    const message = refusal(() =>
      loadConfig({
        PORT: '1.5',
        LOG_LEVEL: 'loud',
        ENCRYPTION_KEY: 'hunter2',
        SERVICE_S3_MEDIA_UPLOAD_BUCKET: 'media',
        SERVICE_S3_MEDIA_UPLOAD_ENDPOINT: 's3.example/hunter2',
      }),
    );
    expect(message).toBe(
      'invalid configuration: PORT=1.5 is not an integer between 1 and 65535; ' +
        'LOG_LEVEL=loud is not one of fatal|error|warn|info|debug|trace; ' +
        'SERVICE_S3_MEDIA_UPLOAD_ENDPOINT must be an http:// or https:// URL; ' +
        'ENCRYPTION_KEY must be 64 hex characters (256 bits, e.g. openssl rand -hex 32)',
    );
  });
});

describe('the web’s OTLP/gRPC listener', () => {
  const base = requiredEnvOf('web');
  it('listens on 4317 in plaintext by default', () => {
    expect(loadRoleConfig('web', base).otlpGrpc).toEqual({ port: 4317, tls: undefined });
  });

  it('takes TLS from a certificate and key named together', () => {
    const config = loadRoleConfig('web', {
      ...base,
      [OTLP_GRPC_ENV.port]: '14317',
      [OTLP_GRPC_ENV.tlsCertFile]: '/tls/cert.pem',
      [OTLP_GRPC_ENV.tlsKeyFile]: '/tls/key.pem',
    });
    expect(config.otlpGrpc).toEqual({
      port: 14317,
      tls: { certFile: '/tls/cert.pem', keyFile: '/tls/key.pem' },
    });
  });

  it('names both variables when one is set alone', () => {
    expect(refusal(() => loadRoleConfig('web', { ...base, [OTLP_GRPC_ENV.tlsKeyFile]: '/k.pem' }))).toContain(
      `${OTLP_GRPC_ENV.tlsCertFile} and ${OTLP_GRPC_ENV.tlsKeyFile} must be set together`,
    );
  });
});
