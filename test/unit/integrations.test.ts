/**
 * The integrations' pure rules: windows and their delivery lag, the first checkpoint of each
 * export mode, the sync status, the object keys, the reference's request refusals, and the
 * PostHog event of an enriched observation (UUID v5, distinct id, `$set` or anonymous).
 */
import { describe, expect, it } from 'vitest';
import { V4_DEFAULTS } from '../../server/contract/write-modes.ts';
import {
  backoffMs,
  blobSourceRefusal,
  DELIVERY_LAG_MS,
  defaultBlobSource,
  initialCheckpoint,
  integrationKey,
  nextSyncAt,
  nextWindow,
  observationEvent,
  retryableStatus,
  startDateProblem,
  syncStatus,
  upsertBlobRequest,
  uuidV5,
} from '../../server/features/integrations/rules.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T = Date.UTC(2026, 10, 25, 10, 0, 0); // a Wednesday, 10:00 UTC
const MONDAY = Date.UTC(2026, 10, 23);

describe('nextWindow', () => {
  it.each([
    ['hourly, closed and past the lag', 'hourly', T, T + HOUR + DELIVERY_LAG_MS, { start: T, end: T + HOUR }],
    ['hourly, closed but inside the lag', 'hourly', T, T + HOUR + DELIVERY_LAG_MS - 1, undefined],
    ['every 20 minutes', 'every_20_minutes', T, T + 2 * HOUR, { start: T, end: T + 20 * MIN }],
    [
      'daily from a custom time: to the next midnight',
      'daily',
      T,
      T + 2 * DAY,
      { start: T, end: T + 14 * HOUR },
    ],
    ['weekly windows end on Mondays', 'weekly', T, MONDAY + 14 * DAY, { start: T, end: MONDAY + 7 * DAY }],
    [
      'full history: one catch-up window to the last closed boundary',
      'hourly',
      0,
      T + 30 * MIN,
      { start: 0, end: T },
    ],
  ] as const)('%s', (_, f, checkpoint, now, expected) => {
    expect(nextWindow(f, checkpoint, now)).toEqual(expected);
  });

  it('next sync: the following window closes, plus the lag', () => {
    expect(nextSyncAt('hourly', T)).toBe(T + HOUR + DELIVERY_LAG_MS);
    expect(nextSyncAt('daily', T)).toBe(T + 14 * HOUR + DELIVERY_LAG_MS);
  });
});

describe('initialCheckpoint', () => {
  it.each([
    ['FULL_HISTORY', null, 0],
    ['FROM_TODAY', null, Date.UTC(2026, 10, 25)],
    ['FROM_CUSTOM_DATE', T - 3 * DAY, T - 3 * DAY],
  ] as const)('%s', (mode, start, expected) => {
    expect(initialCheckpoint(mode, start, T + 5 * MIN)).toBe(expected);
  });
});

describe('syncStatus', () => {
  const base = {
    enabled: true,
    lastError: null,
    lastSyncAt: null,
    checkpoint: T,
    frequency: 'hourly' as const,
  };
  it.each([
    ['disabled', { enabled: false }, T, 'disabled'],
    ['error', { lastError: 'AccessDenied' }, T, 'error'],
    ['never synced, nothing due', {}, T + 10 * MIN, 'idle'],
    ['never synced, a window due', {}, T + 2 * HOUR, 'queued'],
    ['synced, next window due', { lastSyncAt: T, checkpoint: T }, T + 2 * HOUR, 'queued'],
    ['synced, next window not due', { lastSyncAt: T, checkpoint: T }, T + HOUR, 'up_to_date'],
  ] as const)('%s', (_, patch, now, expected) => {
    expect(syncStatus({ ...base, ...patch }, now)).toBe(expected);
  });
});

describe('integrationKey', () => {
  const w = { start: T, end: T + HOUR };
  it.each([
    [
      { fileType: 'JSONL', compressed: true },
      'SCORES',
      'out/p1/scores/20261125T100000Z_20261125T110000Z.jsonl.gz',
    ],
    [
      { fileType: 'CSV', compressed: false },
      'ENRICHED_OBSERVATIONS',
      'out/p1/observations_v2/20261125T100000Z_20261125T110000Z.csv',
    ],
    [
      { fileType: 'JSON', compressed: false },
      'LEGACY_TRACES_OBSERVATIONS',
      'out/p1/traces_observations/20261125T100000Z_20261125T110000Z.json',
    ],
    [
      { fileType: 'PARQUET', compressed: true },
      'SCORES',
      'out/p1/scores/20261125T100000Z_20261125T110000Z.parquet',
    ],
  ] as const)('%j %s', (file, source, expected) => {
    expect(integrationKey({ prefix: 'out/', projectId: 'p1', ...file }, source, w)).toBe(expected);
  });
});

describe('upsertBlobRequest', () => {
  const ok = {
    projectId: 'p1',
    type: 'S3',
    bucketName: 'b',
    region: 'us-east-1',
    exportFrequency: 'hourly',
    enabled: true,
    forcePathStyle: false,
    fileType: 'JSONL',
    exportMode: 'FROM_TODAY',
  };
  const problems = (patch: Record<string, unknown>) => {
    const r = upsertBlobRequest.safeParse({ ...ok, ...patch });
    return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
  };
  it.each([
    ['the minimal request', {}, []],
    ['Azure', { type: 'AZURE_BLOB_STORAGE' }, ['type']],
    ['S3_COMPATIBLE without endpoint', { type: 'S3_COMPATIBLE' }, ['endpoint']],
    ['a key id without its secret', { accessKeyId: 'AK' }, ['secretAccessKey']],
    ['a custom mode without its date', { exportMode: 'FROM_CUSTOM_DATE' }, ['exportStartDate']],
    ['a prefix without the final slash', { prefix: 'a/b' }, ['prefix']],
    ['a prefix climbing out', { prefix: '../' }, ['prefix']],
    ['field groups without a source', { exportFieldGroups: ['core'] }, ['exportSource', 'exportFieldGroups']],
    [
      'a narrower field selection',
      { exportSource: 'OBSERVATIONS_V2', exportFieldGroups: ['core'] },
      ['exportFieldGroups'],
    ],
    ['an unknown frequency', { exportFrequency: 'monthly' }, ['exportFrequency']],
  ])('%s', (_, patch, expected) => {
    expect(problems(patch)).toEqual(expected);
  });

  it('refuses a start date more than 27 hours ahead', () => {
    const at = (d: number) =>
      upsertBlobRequest.parse({
        ...ok,
        exportMode: 'FROM_CUSTOM_DATE',
        exportStartDate: new Date(d).toISOString(),
      });
    expect(startDateProblem(at(T + 26 * HOUR), T)).toBeUndefined();
    expect(startDateProblem(at(T + 28 * HOUR), T)).toMatch(/future/);
  });
});

describe('sources by write mode', () => {
  const legacy = { ...V4_DEFAULTS, release: '4' as const, writeMode: 'legacy' as const };
  const eventsOnly = { ...legacy, writeMode: 'events_only' as const };
  it('defaults to the legacy tables where written, else the enriched observations', () => {
    expect(defaultBlobSource(legacy)).toBe('LEGACY_TRACES_OBSERVATIONS');
    expect(defaultBlobSource(eventsOnly)).toBe('OBSERVATIONS_V2');
    expect(blobSourceRefusal('LEGACY_TRACES_AND_ENRICHED_OBSERVATIONS', eventsOnly)).toMatch(/events_only/);
  });
});

describe('the PostHog event of an enriched observation', () => {
  const row = {
    id: 'span1',
    trace_id: 'trace1',
    name: 'llm-call',
    trace_name: 'chat',
    started_at: '2026-11-25 10:00:01.123456',
    type: 'GENERATION',
    level: 'DEFAULT',
    version: '',
    release: 'r1',
    environment: 'default',
    user_id: 'u 1',
    session_id: 's1',
    tags: ['a'],
    provided_model_name: 'gpt-x',
    total_cost: 0.5,
    latency: 1.5,
    time_to_first_token: null,
    input_tokens: '10',
    output_tokens: '5',
    total_tokens: '15',
    posthog_session_id: 'ph-1',
  };
  const project = { id: 'p1', name: 'Project' };

  it('is RFC 4122 version 5', () => {
    expect(uuidV5('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '886313e1-3b8a-5372-9b90-0c9aee199e5d',
    );
  });

  it('an identified user: distinct id, $set of the user link, the reference properties', () => {
    const e = observationEvent(row, project, 'https://obs.example');
    expect(e).toMatchObject({
      event: 'langfuse observation',
      distinct_id: 'u 1',
      timestamp: '2026-11-25T10:00:01.123Z',
      uuid: '31061f17-e9e0-5d81-92c2-c4e580853093',
      properties: {
        langfuse_id: 'span1',
        langfuse_trace_id: 'trace1',
        langfuse_url: 'https://obs.example/project/p1/traces/trace1?observation=span1',
        langfuse_user_url: 'https://obs.example/project/p1/users/u%201',
        langfuse_cost_usd: 0.5,
        langfuse_input_units: 10,
        langfuse_output_units: 5,
        langfuse_total_units: 15,
        langfuse_version: null,
        langfuse_model: 'gpt-x',
        langfuse_event_version: '1.0.0',
        $session_id: 'ph-1',
        $set: { langfuse_user_url: 'https://obs.example/project/p1/users/u%201' },
      },
    });
    expect(e.properties).not.toHaveProperty('$process_person_profile');
  });

  it('no user: the UUID as distinct id, an anonymous event', () => {
    const e = observationEvent({ ...row, user_id: '', posthog_session_id: '' }, project, '');
    expect(e.distinct_id).toBe(e.uuid);
    expect(e.properties).toMatchObject({
      $process_person_profile: false,
      $session_id: null,
      langfuse_user_id: null,
    });
    expect(e.properties).not.toHaveProperty('$set');
  });
});

describe('retries', () => {
  it.each([
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
  ])('status %i retryable: %s', (status, expected) => {
    expect(retryableStatus(status)).toBe(expected);
  });
  it('doubles up to 30 s', () => {
    expect([1, 2, 3, 10].map((a) => backoffMs(a, 1000))).toEqual([1000, 2000, 4000, 30_000]);
  });
});
