import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config/env.ts';
import { behaviourOf, otelTargets, V4_DEFAULTS } from '../../server/contract/write-modes.ts';

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
    expect(() => loadConfig(env, { require: ['DATABASE_URL'] })).toThrow('DATABASE_URL is required');
    expect(() => loadConfig(env, { require: ['DATABASE_URL'] })).not.toThrow('hunter2');
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
