/**
 * Every route of the web app in every deployment (write modes legacy, dual, dual without the
 * preview opt-in, events_only, and release 3), in process with `app.inject()` over real stores
 * (PostgreSQL, the embedded ClickHouse engine). The expected statuses are written from the spec's
 * tables, not from the code: deprecated endpoints keep working in legacy and dual and answer 404
 * in events_only whatever the request; the version 4 reads need events_only or dual with the
 * preview opt-in; metrics v2 is not served in legacy; release 3 has no version 4 endpoint.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebApp } from '../../server/app/web/app.ts';
import { traceDeletionDeps } from '../../server/features/deletion/traces.ts';
import { MaskingCatalog } from '../../server/features/masking/catalog.ts';
import { ModelCatalog } from '../../server/features/models/catalog.ts';
import { createProject, KeyVerifier } from '../../server/features/projects/keys.ts';
import { createOrganizationKey } from '../../server/features/projects/organizations.ts';
import { ingestionTombstones } from '../../server/features/tombstones/record.ts';
import { pgEntityLocks } from '../../server/features/write-model/entity-locks.ts';
import { clickhouseStore } from '../../server/features/write-model/store.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { localBlobStore } from '../../server/platform/blobs/local.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { createPool } from '../../server/platform/datastores/postgres.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';
import { AnalyticsMigrator } from '../../server/platform/migrations/analytics/runner.ts';
import { migrationsFor } from '../../server/platform/migrations/analytics/versions.ts';
import { RelationalMigrator } from '../../server/platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../../server/platform/migrations/relational/versions.ts';
import { booleanEvaluator } from '../fixtures/judge.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { LEGACY_ENV } from '../fixtures/service.ts';

const DEPLOYMENTS = {
  legacy: LEGACY_ENV,
  dual: { SERVICE_MIGRATION_V4_WRITE_MODE: 'dual', SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write' },
  dual_no_preview: {
    SERVICE_MIGRATION_V4_WRITE_MODE: 'dual',
    SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write',
    SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: 'false',
  },
  events_only: { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' },
  release3: { SERVICE_RELEASE: '3' },
} as const;
type Deployment = keyof typeof DEPLOYMENTS;
const ALL = Object.keys(DEPLOYMENTS) as Deployment[];

/** Who serves what, from the spec (Endpoints, Replacement surfaces, Limits). */
const SERVED = {
  always: ALL,
  deprecated: ['legacy', 'dual', 'dual_no_preview', 'release3'],
  v4Reads: ['dual', 'events_only'],
  metricsV2: ['dual', 'events_only'],
  release4: ['legacy', 'dual', 'dual_no_preview', 'events_only'],
} satisfies Record<string, Deployment[]>;
type Served = keyof typeof SERVED;

const NOW = new Date().toISOString();
/** The media of the bytes `abc`: its id is the start of their SHA-256. */
const MEDIA_SHA256 = 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=';
const MEDIA_ID = 'ungWv48Bz-pBQUDeXa4iI7';
const HOUR_AGO = new Date(Date.now() - 3_600_000).toISOString();
const metricsQuery = (view: string) =>
  encodeURIComponent(
    JSON.stringify({
      view,
      metrics: [{ measure: 'count', aggregation: 'count' }],
      fromTimestamp: HOUR_AGO,
      toTimestamp: NOW,
    }),
  );

interface Case {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: (d: Deployment) => string;
  /** The body, or one per deployment where a body may be accepted only once. */
  body?: unknown;
  served: Served;
  /** Status where served (404 elsewhere). */
  ok: number;
  /** The path as the OpenAPI document names it, where the URL does not show it. */
  template?: string;
  /** Sent with the organization's key (the administration routes) instead of the project's. */
  organization?: true;
}

const json = (method: Case['method'], url: string, body: unknown, served: Served, ok: number): Case => ({
  method,
  url: () => url,
  body,
  served,
  ok,
});
const get = (url: string, served: Served, ok = 200): Case => ({ method: 'GET', url: () => url, served, ok });

/** The administration routes, with the organization's key, on the seeded project or unknown ids. */
function administration(): [string, Case][] {
  const org = (c: Omit<Case, 'url' | 'served'> & { url: () => string }): Case => ({
    ...c,
    served: 'always',
    organization: true,
  });
  const projectPath = () => `/api/public/projects/${seeded.project}`;
  const P = '/api/public/projects/{projectId}';
  return [
    [
      'POST projects',
      org({ method: 'POST', url: () => '/api/public/projects', body: { name: 'm-org' }, ok: 201 }),
    ],
    [
      'PUT project',
      org({ method: 'PUT', url: projectPath, body: { name: 'route-matrix' }, ok: 200, template: P }),
    ],
    [
      'DELETE project',
      org({ method: 'DELETE', url: () => '/api/public/projects/m-none', ok: 404, template: P }),
    ],
    [
      'GET project keys',
      org({ method: 'GET', url: () => `${projectPath()}/apiKeys`, ok: 200, template: `${P}/apiKeys` }),
    ],
    [
      'POST project keys',
      org({
        method: 'POST',
        url: () => `${projectPath()}/apiKeys`,
        body: {},
        ok: 200,
        template: `${P}/apiKeys`,
      }),
    ],
    [
      'DELETE project key',
      org({
        method: 'DELETE',
        url: () => `${projectPath()}/apiKeys/m-none`,
        ok: 404,
        template: `${P}/apiKeys/{apiKeyId}`,
      }),
    ],
    [
      'GET blob-storage integrations',
      org({ method: 'GET', url: () => '/api/public/integrations/blob-storage', ok: 200 }),
    ],
    [
      'PUT blob-storage integration (no body fields)',
      org({ method: 'PUT', url: () => '/api/public/integrations/blob-storage', body: {}, ok: 400 }),
    ],
    ...(['GET', 'DELETE'] as const).map((method): [string, Case] => [
      `${method} blob-storage integration (unknown id)`,
      org({
        method,
        url: () => '/api/public/integrations/blob-storage/m-none',
        ok: 404,
        template: '/api/public/integrations/blob-storage/{id}',
      }),
    ]),
    [
      'GET PostHog integrations',
      org({ method: 'GET', url: () => '/api/public/integrations/posthog', ok: 200 }),
    ],
    [
      'PUT PostHog integration (no body fields)',
      org({ method: 'PUT', url: () => '/api/public/integrations/posthog', body: {}, ok: 400 }),
    ],
    [
      'DELETE PostHog integration (unknown project)',
      org({
        method: 'DELETE',
        url: () => '/api/public/integrations/posthog/m-none',
        ok: 404,
        template: '/api/public/integrations/posthog/{projectId}',
      }),
    ],
    ['GET org projects', org({ method: 'GET', url: () => '/api/public/organizations/projects', ok: 200 })],
    ['GET org keys', org({ method: 'GET', url: () => '/api/public/organizations/apiKeys', ok: 200 })],
    ...(['organization', 'project'] as const).flatMap((scope): [string, Case][] => {
      const url = () =>
        scope === 'organization' ? '/api/public/organizations/memberships' : `${projectPath()}/memberships`;
      const template = scope === 'project' ? `${P}/memberships` : undefined;
      const t = template ? { template } : {};
      return [
        [`GET ${scope} memberships`, org({ method: 'GET', url, ok: 200, ...t })],
        [
          `PUT ${scope} membership`,
          org({ method: 'PUT', url, body: { userId: 'm-none', role: 'VIEWER' }, ok: 404, ...t }),
        ],
        [
          `DELETE ${scope} membership`,
          org({ method: 'DELETE', url, body: { userId: 'm-none' }, ok: 404, ...t }),
        ],
      ];
    }),
  ];
}

/** One valid request per route; the seeded entities exist (`beforeAll`). */
const VALID: [string, Case][] = [
  ['POST ingestion', json('POST', '/api/public/ingestion', { batch: [] }, 'always', 207)],
  ['POST otel traces', json('POST', '/api/public/otel/v1/traces', { resourceSpans: [] }, 'always', 200)],
  [
    'POST otel metrics',
    json('POST', '/api/public/otel/v1/metrics', { resourceMetrics: [] }, 'release4', 200),
  ],
  ['POST otel logs', json('POST', '/api/public/otel/v1/logs', { resourceLogs: [] }, 'always', 200)],
  ['POST traces', json('POST', '/api/public/traces', { name: 'm' }, 'deprecated', 200)],
  [
    'POST spans',
    json('POST', '/api/public/spans', { id: 'm-span-2', traceId: 'm-trace' }, 'deprecated', 200),
  ],
  [
    'PATCH spans',
    json('PATCH', '/api/public/spans', { id: 'm-span-2', traceId: 'm-trace' }, 'deprecated', 200),
  ],
  [
    'POST generations',
    json('POST', '/api/public/generations', { id: 'm-gen', traceId: 'm-trace' }, 'deprecated', 200),
  ],
  [
    'PATCH generations',
    json('PATCH', '/api/public/generations', { id: 'm-gen', traceId: 'm-trace' }, 'deprecated', 200),
  ],
  [
    'POST events',
    json('POST', '/api/public/events', { id: 'm-event', traceId: 'm-trace' }, 'deprecated', 200),
  ],
  ['GET traces', get('/api/public/traces', 'deprecated')],
  ['GET trace', get('/api/public/traces/m-trace', 'deprecated')],
  ['GET observations', get('/api/public/observations', 'deprecated')],
  ['GET observation', get('/api/public/observations/m-span', 'deprecated')],
  ['GET sessions', get('/api/public/sessions', 'deprecated')],
  ['GET session', get('/api/public/sessions/m-session', 'deprecated')],
  ['GET scores', get('/api/public/scores', 'deprecated')],
  ['GET score', get('/api/public/scores/m-score', 'deprecated')],
  ['GET v2 scores', get('/api/public/v2/scores', 'deprecated')],
  ['GET v2 score', get('/api/public/v2/scores/m-score', 'deprecated')],
  ['GET metrics', get(`/api/public/metrics?query=${metricsQuery('traces')}`, 'deprecated')],
  ['GET metrics daily', get('/api/public/metrics/daily', 'deprecated')],
  [
    'POST dataset-run-items',
    json(
      'POST',
      '/api/public/dataset-run-items',
      { runName: 'm-run', datasetItemId: 'm-item', traceId: 'm-trace' },
      'always',
      200,
    ),
  ],
  [
    'GET dataset-run-items',
    get('/api/public/dataset-run-items?datasetId=m-ds-id&runName=m-run', 'deprecated'),
  ],
  ['GET dataset runs', get('/api/public/datasets/m-ds/runs', 'deprecated')],
  ['GET dataset run', get('/api/public/datasets/m-ds/runs/m-run', 'deprecated')],
  [
    'DELETE dataset run',
    {
      method: 'DELETE',
      url: (d) => `/api/public/datasets/m-ds/runs/m-del-${d}`,
      served: 'deprecated',
      ok: 200,
    },
  ],
  ['GET v2 observations', get('/api/public/v2/observations', 'v4Reads')],
  ['GET experiments', get(`/api/public/experiments?fromStartTime=${HOUR_AGO}`, 'v4Reads')],
  ['GET experiment-items', get(`/api/public/experiment-items?fromStartTime=${HOUR_AGO}`, 'v4Reads')],
  ['GET v3 scores', get('/api/public/v3/scores', 'release4')],
  ['GET v2 metrics', get(`/api/public/v2/metrics?query=${metricsQuery('observations')}`, 'metricsV2')],
  ['GET v2 genai metrics', get(`/api/public/v2/metrics?query=${metricsQuery('genai-metrics')}`, 'metricsV2')],
  ['POST v2 datasets', json('POST', '/api/public/v2/datasets', { name: 'm-ds-2' }, 'always', 200)],
  ['GET v2 datasets', get('/api/public/v2/datasets', 'always')],
  ['GET v2 dataset', get('/api/public/v2/datasets/m-ds', 'always')],
  ['GET v1 dataset', get('/api/public/datasets/m-ds', 'always')],
  [
    'POST dataset-items',
    json(
      'POST',
      '/api/public/dataset-items',
      { datasetName: 'm-ds', id: 'm-item-2', input: 1 },
      'always',
      200,
    ),
  ],
  ['GET dataset-items', get('/api/public/dataset-items?datasetName=m-ds', 'always')],
  ['GET dataset-item', get('/api/public/dataset-items/m-item', 'always')],
  [
    'DELETE dataset-item',
    { method: 'DELETE', url: (d) => `/api/public/dataset-items/m-item-del-${d}`, served: 'always', ok: 200 },
  ],
  ['POST v1 datasets', json('POST', '/api/public/datasets', { name: 'm-ds-3' }, 'always', 200)],
  ['GET v1 datasets', get('/api/public/datasets', 'always')],
  [
    'POST scores',
    json('POST', '/api/public/scores', { traceId: 'm-trace', name: 'q', value: 1 }, 'always', 200),
  ],
  [
    'DELETE score',
    {
      method: 'DELETE',
      url: (d) => `/api/public/scores/m-score-del-${d}`,
      served: 'always',
      ok: 202,
      template: '/api/public/scores/{scoreId}',
    },
  ],
  [
    'POST score-configs',
    json('POST', '/api/public/score-configs', { name: 'm-cfg-2', dataType: 'NUMERIC' }, 'always', 200),
  ],
  ['GET score-configs', get('/api/public/score-configs', 'always')],
  [
    'GET score-config',
    {
      method: 'GET',
      url: () => `/api/public/score-configs/${seeded.config}`,
      served: 'always',
      ok: 200,
      template: '/api/public/score-configs/{configId}',
    },
  ],
  [
    'PATCH score-config',
    {
      method: 'PATCH',
      url: () => `/api/public/score-configs/${seeded.config}`,
      body: { description: 'patched' },
      served: 'always',
      ok: 200,
      template: '/api/public/score-configs/{configId}',
    },
  ],
  [
    'POST comments',
    json(
      'POST',
      '/api/public/comments',
      { objectType: 'TRACE', objectId: 'm-trace', content: 'c2' },
      'always',
      200,
    ),
  ],
  ['GET comments', get('/api/public/comments', 'always')],
  [
    'GET comment',
    {
      method: 'GET',
      url: () => `/api/public/comments/${seeded.comment}`,
      served: 'always',
      ok: 200,
      template: '/api/public/comments/{commentId}',
    },
  ],
  [
    'POST prompts',
    json('POST', '/api/public/v2/prompts', { name: 'm-prompt-2', prompt: 'hi', type: 'text' }, 'always', 200),
  ],
  ['GET prompts', get('/api/public/v2/prompts', 'always')],
  [
    'GET prompt',
    {
      method: 'GET',
      url: () => '/api/public/v2/prompts/m-prompt',
      served: 'always',
      ok: 200,
      template: '/api/public/v2/prompts/{name}',
    },
  ],
  [
    'GET prompt in a folder',
    {
      method: 'GET',
      url: () => '/api/public/v2/prompts/m-folder/m-prompt',
      served: 'always',
      ok: 200,
      template: '/api/public/v2/prompts/*',
    },
  ],
  [
    'PATCH prompt labels',
    {
      method: 'PATCH',
      url: () => '/api/public/v2/prompts/m-prompt/versions/1',
      body: { newLabels: ['m-label'] },
      served: 'always',
      ok: 200,
      template: '/api/public/v2/prompts/{name}/versions/{version}',
    },
  ],
  [
    'PATCH prompt labels in a folder',
    {
      method: 'PATCH',
      url: () => '/api/public/v2/prompts/m-folder/m-prompt/versions/1',
      body: { newLabels: ['m-label'] },
      served: 'always',
      ok: 200,
      template: '/api/public/v2/prompts/*',
    },
  ],
  [
    'DELETE prompt',
    {
      method: 'DELETE',
      url: (d) => `/api/public/v2/prompts/m-prompt-del-${d}`,
      served: 'always',
      ok: 204,
      template: '/api/public/v2/prompts/{name}',
    },
  ],
  [
    'DELETE prompt in a folder',
    {
      method: 'DELETE',
      url: (d) => `/api/public/v2/prompts/m-folder/m-prompt-del-${d}?version=1`,
      served: 'always',
      ok: 204,
      template: '/api/public/v2/prompts/*',
    },
  ],
  [
    'DELETE trace',
    {
      method: 'DELETE',
      url: () => '/api/public/traces/m-trace-del',
      served: 'always',
      ok: 200,
      template: '/api/public/traces/{traceId}',
    },
  ],
  ['DELETE traces', json('DELETE', '/api/public/traces', { traceIds: ['m-trace-del'] }, 'always', 200)],
  ['GET trace-deletions', get('/api/public/trace-deletions?traceId=m-trace-del', 'always')],
  [
    'GET trace-deletion',
    {
      method: 'GET',
      url: () => '/api/public/trace-deletions/m-none',
      served: 'always',
      ok: 404,
      template: '/api/public/trace-deletions/{deletionId}',
    },
  ],
  [
    'POST media',
    json(
      'POST',
      '/api/public/media',
      {
        traceId: 'm-trace',
        contentType: 'image/png',
        contentLength: 3,
        sha256Hash: MEDIA_SHA256,
        field: 'input',
      },
      'always',
      201,
    ),
  ],
  [
    'PATCH media',
    {
      ...json(
        'PATCH',
        `/api/public/media/${MEDIA_ID}`,
        { uploadedAt: NOW, uploadHttpStatus: 200 },
        'always',
        200,
      ),
      template: '/api/public/media/{mediaId}',
    },
  ],
  [
    'GET media',
    { ...get(`/api/public/media/${MEDIA_ID}`, 'always'), template: '/api/public/media/{mediaId}' },
  ],
  [
    'POST exports',
    json(
      'POST',
      '/api/public/exports',
      { source: 'SCORES', format: 'JSONL', frequency: 'daily' },
      'always',
      201,
    ),
  ],
  ['GET exports', get('/api/public/exports', 'always')],
  [
    'GET export',
    {
      method: 'GET',
      url: () => `/api/public/exports/${seeded.export}`,
      served: 'always',
      ok: 200,
      template: '/api/public/exports/{exportId}',
    },
  ],
  [
    'DELETE export',
    {
      method: 'DELETE',
      url: (d) => `/api/public/exports/${seeded.exportsToDelete[d]}`,
      served: 'always',
      ok: 200,
      template: '/api/public/exports/{exportId}',
    },
  ],
  [
    'POST models',
    {
      method: 'POST',
      url: () => '/api/public/models',
      body: (d: Deployment) => ({
        modelName: `m-model-${d}`,
        matchPattern: `^m-model-${d}$`,
        unit: 'TOKENS',
        inputPrice: 1e-6,
      }),
      served: 'always',
      ok: 200,
    },
  ],
  ['GET models', get('/api/public/models', 'always')],
  [
    'GET model',
    {
      method: 'GET',
      url: () => `/api/public/models/${seeded.model}`,
      served: 'always',
      ok: 200,
      template: '/api/public/models/{id}',
    },
  ],
  [
    'DELETE model',
    {
      method: 'DELETE',
      url: (d) => `/api/public/models/${seeded.modelsToDelete[d]}`,
      served: 'always',
      ok: 200,
      template: '/api/public/models/{id}',
    },
  ],
  ['GET llm-connections', get('/api/public/llm-connections', 'always')],
  [
    'PUT llm-connection',
    json(
      'PUT',
      '/api/public/llm-connections',
      { provider: 'm', adapter: 'openai', secretKey: 'sk-m' },
      'always',
      200,
    ),
  ],
  [
    'DELETE llm-connection (unknown id)',
    {
      method: 'DELETE',
      url: () => '/api/public/llm-connections/m-none',
      served: 'always',
      ok: 404,
      template: '/api/public/llm-connections/{id}',
    },
  ],
  [
    'POST evaluator (no model: preflight fails)',
    json(
      'POST',
      '/api/public/unstable/evaluators',
      booleanEvaluator('m-eval', '{{output}}', 's'),
      'always',
      422,
    ),
  ],
  ['GET evaluators', get('/api/public/unstable/evaluators', 'always')],
  [
    'GET evaluator (managed template)',
    {
      ...get('/api/public/unstable/evaluators/managed-correctness', 'always'),
      template: '/api/public/unstable/evaluators/{evaluatorId}',
    },
  ],
  [
    'DELETE evaluator (unknown id)',
    {
      method: 'DELETE',
      url: () => '/api/public/unstable/evaluators/m-none',
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/evaluators/{evaluatorId}',
    },
  ],
  [
    'POST evaluation rule (target experiment, without its mapping)',
    json(
      'POST',
      '/api/public/unstable/evaluation-rules',
      { name: 'm-rule', evaluator: { name: 'correctness' }, target: 'experiment', enabled: false },
      'always',
      400,
    ),
  ],
  ['GET evaluation rules', get('/api/public/unstable/evaluation-rules', 'always')],
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} evaluation rule (unknown id)`,
    {
      method,
      url: () => '/api/public/unstable/evaluation-rules/m-none',
      ...(method === 'PATCH' ? { body: { enabled: false } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/evaluation-rules/{evaluationRuleId}',
    },
  ]),
  [
    'POST masking rule (custom, without its pattern)',
    json('POST', '/api/public/unstable/masking-rules', { name: 'm-mask', detector: 'custom' }, 'always', 400),
  ],
  ['GET masking rules', get('/api/public/unstable/masking-rules', 'always')],
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} masking rule (unknown id)`,
    {
      method,
      url: () => '/api/public/unstable/masking-rules/m-none',
      ...(method === 'PATCH' ? { body: { enabled: false } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/masking-rules/{maskingRuleId}',
    },
  ]),
  ['POST masking preview', json('POST', '/api/public/unstable/masking-preview', {}, 'always', 200)],
  ['GET dashboards', get('/api/public/unstable/dashboards', 'always')],
  ['POST dashboard', json('POST', '/api/public/unstable/dashboards', { name: 'm-dash' }, 'always', 200)],
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} dashboard (unknown id)`,
    {
      method,
      url: () => '/api/public/unstable/dashboards/m-none',
      ...(method === 'PATCH' ? { body: { name: 'm' } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/dashboards/{dashboardId}',
    },
  ]),
  [
    'POST dashboard placement (unknown dashboard)',
    {
      method: 'POST',
      url: () => '/api/public/unstable/dashboards/m-none/placements',
      body: { type: 'preset', presetId: 'total-cost' },
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/dashboards/{dashboardId}/placements',
    },
  ],
  ...(['PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} dashboard placement (unknown dashboard)`,
    {
      method,
      url: () => '/api/public/unstable/dashboards/m-none/placements/m-tile',
      ...(method === 'PATCH' ? { body: { width: 6 } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/dashboards/{dashboardId}/placements/{placementId}',
    },
  ]),
  ['GET dashboard widgets', get('/api/public/unstable/dashboard-widgets', 'always')],
  [
    'POST dashboard widget',
    json(
      'POST',
      '/api/public/unstable/dashboard-widgets',
      {
        name: 'm-widget',
        view: 'observations',
        dimensions: [],
        metrics: [{ measure: 'count', agg: 'count' }],
        filters: [],
        chartType: 'NUMBER',
      },
      'always',
      200,
    ),
  ],
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} dashboard widget (unknown id)`,
    {
      method,
      url: () => '/api/public/unstable/dashboard-widgets/m-none',
      ...(method === 'PATCH' ? { body: { name: 'm' } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/dashboard-widgets/{widgetId}',
    },
  ]),
  [
    'POST alert channel (loopback URL: refused)',
    json(
      'POST',
      '/api/public/unstable/alert-channels',
      { name: 'm-hook', type: 'webhook', url: 'http://127.0.0.1:9/hook' },
      'always',
      400,
    ),
  ],
  ['GET alert channels', get('/api/public/unstable/alert-channels', 'always')],
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} alert channel (unknown id)`,
    {
      method,
      url: () => '/api/public/unstable/alert-channels/m-none',
      ...(method === 'PATCH' ? { body: { name: 'm' } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/alert-channels/{alertChannelId}',
    },
  ]),
  [
    'POST alert channel test (unknown id)',
    {
      method: 'POST',
      url: () => '/api/public/unstable/alert-channels/m-none/test',
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/alert-channels/{alertChannelId}/test',
    },
  ],
  [
    'POST alert rule',
    {
      method: 'POST',
      url: () => '/api/public/unstable/alert-rules',
      body: (d: Deployment) => ({
        name: `m-alert-${d}`,
        metric: { view: 'observations', measure: 'count', aggregation: 'count' },
        operator: '>',
        alertThreshold: 100,
        window: '5m',
        frequency: '1m',
      }),
      served: 'always',
      ok: 200,
    },
  ],
  ['GET alert rules', get('/api/public/unstable/alert-rules', 'always')],
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} alert rule (unknown id)`,
    {
      method,
      url: () => '/api/public/unstable/alert-rules/m-none',
      ...(method === 'PATCH' ? { body: { paused: true } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/unstable/alert-rules/{alertRuleId}',
    },
  ]),
  [
    'GET alert rule history (unknown id)',
    {
      ...get('/api/public/unstable/alert-rules/m-none/history', 'always', 404),
      template: '/api/public/unstable/alert-rules/{alertRuleId}/history',
    },
  ],
  ['GET alert notifications', get('/api/public/unstable/alert-notifications', 'always')],
  [
    'POST annotation queue',
    {
      method: 'POST',
      url: () => '/api/public/annotation-queues',
      body: (d: Deployment) => ({ name: `m-queue-${d}`, scoreConfigIds: [seeded.config] }),
      served: 'always',
      ok: 200,
    },
  ],
  ['GET annotation queues', get('/api/public/annotation-queues', 'always')],
  [
    'GET annotation queue (unknown id)',
    {
      ...get('/api/public/annotation-queues/m-none', 'always', 404),
      template: '/api/public/annotation-queues/{queueId}',
    },
  ],
  [
    'GET annotation queue items (unknown queue)',
    {
      ...get('/api/public/annotation-queues/m-none/items', 'always', 404),
      template: '/api/public/annotation-queues/{queueId}/items',
    },
  ],
  [
    'POST annotation queue item (unknown queue)',
    {
      ...json(
        'POST',
        '/api/public/annotation-queues/m-none/items',
        { objectId: 'm-trace', objectType: 'TRACE' },
        'always',
        404,
      ),
      template: '/api/public/annotation-queues/{queueId}/items',
    },
  ],
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} annotation queue item (unknown queue)`,
    {
      method,
      url: () => '/api/public/annotation-queues/m-none/items/m-none',
      ...(method === 'PATCH' ? { body: { status: 'COMPLETED' } } : {}),
      served: 'always',
      ok: 404,
      template: '/api/public/annotation-queues/{queueId}/items/{itemId}',
    },
  ]),
  ...(['POST', 'DELETE'] as const).map((method): [string, Case] => [
    `${method} annotation queue assignment (unknown queue)`,
    {
      ...json(
        method,
        '/api/public/annotation-queues/m-none/assignments',
        { userId: 'm-user' },
        'always',
        404,
      ),
      template: '/api/public/annotation-queues/{queueId}/assignments',
    },
  ]),
  ['GET projects', get('/api/public/projects', 'always')],
  ...administration(),
  ['GET openapi.json', get('/api/public/openapi.json', 'always')],
  ['GET health', get('/api/public/health', 'always')],
  ['GET ready', get('/api/public/ready', 'always')],
];

/** Requests a serving deployment refuses with 400: a refusing one must still answer 404 first. */
const INVALID: [string, Case][] = [
  ['POST spans without id', json('POST', '/api/public/spans', { name: 'x' }, 'deprecated', 400)],
  ['GET traces page 0', get('/api/public/traces?page=0', 'deprecated', 400)],
  ['GET scores limit 1000', get('/api/public/scores?limit=1000', 'deprecated', 400)],
  ['GET metrics without query', get('/api/public/metrics', 'deprecated', 400)],
  ['GET dataset-run-items without parameters', get('/api/public/dataset-run-items', 'deprecated', 400)],
  ['GET v2 observations limit 0', get('/api/public/v2/observations?limit=0', 'v4Reads', 400)],
  ['GET experiments limit 0', get('/api/public/experiments?limit=0', 'v4Reads', 400)],
  ['GET v3 scores limit 0', get('/api/public/v3/scores?limit=0', 'release4', 400)],
  ['GET v2 metrics without query', get('/api/public/v2/metrics', 'metricsV2', 400)],
  ['POST v2 datasets without name', json('POST', '/api/public/v2/datasets', {}, 'always', 400)],
  [
    'POST models with an unknown unit',
    json(
      'POST',
      '/api/public/models',
      { modelName: 'x', matchPattern: 'x', unit: 'LITRES', inputPrice: 1 },
      'always',
      400,
    ),
  ],
  [
    'POST annotation queue without score configs',
    json('POST', '/api/public/annotation-queues', { name: 'm-queue-bad' }, 'always', 400),
  ],
  [
    'POST exports with an unknown source',
    json(
      'POST',
      '/api/public/exports',
      { source: 'TRACES', format: 'JSONL', frequency: 'daily' },
      'always',
      400,
    ),
  ],
];

let pgf: PostgresFixture;
let dir: string;
let ch: ClickHouseClient;
let pool: pg.Pool;
let auth: string;
let orgAuth: string;
const apps = {} as Record<Deployment, FastifyInstance>;
/** Ids the server chose for seeded entities. */
const seeded = {
  project: '',
  comment: '',
  config: '',
  export: '',
  exportsToDelete: {} as Record<Deployment, string>,
  model: '',
  modelsToDelete: {} as Record<Deployment, string>,
};

function app(d: Deployment, analytics = ch): FastifyInstance {
  const config = loadConfig({
    ...DEPLOYMENTS[d],
    DATABASE_URL: pgf.url,
    CLICKHOUSE_URL: `chdb://${dir}`,
    ENCRYPTION_KEY: 'ab'.repeat(32),
  });
  return buildWebApp({
    config,
    pool,
    analytics,
    store: clickhouseStore(analytics, config.clickhouse),
    locks: pgEntityLocks(pool),
    tombstones: ingestionTombstones(traceDeletionDeps(config, { pool: pool, analytics: analytics })),
    keys: new KeyVerifier(pool),
    models: new ModelCatalog(pool),
    masking: new MaskingCatalog(pool),
    mediaBlobs: localBlobStore({
      dir: join(dir, 'blobs'),
      bucket: 'media',
      baseUrl: () => 'http://127.0.0.1',
    }),
    exportBlobs: localBlobStore({
      dir: join(dir, 'exports'),
      bucket: 'exports',
      baseUrl: () => 'http://127.0.0.1',
    }),
    shuttingDown: () => false,
  });
}

async function send(a: FastifyInstance, c: Case, d: Deployment) {
  return a.inject({
    method: c.method,
    url: c.url(d),
    headers: { authorization: c.organization ? orgAuth : auth },
    ...(c.body === undefined
      ? {}
      : { payload: (typeof c.body === 'function' ? c.body(d) : c.body) as object }),
  });
}

beforeAll(async () => {
  pgf = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), 'obs-route-matrix-'));
  ch = createAnalyticsClient({ url: `chdb://${dir}` });
  pool = createPool(pgf.url, 4);
  await new RelationalMigrator(pool, relationalMigrationsFor('4')).up();
  await new AnalyticsMigrator(ch, SINGLE_NODE, migrationsFor('4')).up();
  const project = await createProject(pool, 'route-matrix');
  auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
  seeded.project = project.projectId;
  const orgKey = await createOrganizationKey(pool, 'default', null);
  orgAuth = `Basic ${Buffer.from(`${orgKey.publicKey}:${orgKey.secretKey}`).toString('base64')}`;
  for (const d of ALL) apps[d] = app(d);

  // What the reads by id find: a trace with a span in a session, a score, a dataset with an item
  // and a run (and one run per deployment for the DELETE).
  const seed = async (method: Case['method'], url: string, body: unknown) => {
    const res = await apps.legacy.inject({
      method,
      url,
      headers: { authorization: auth },
      payload: body as object,
    });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json() as Record<string, unknown>;
  };
  await seed('POST', '/api/public/ingestion', {
    batch: [
      {
        id: 'e1',
        type: 'trace-create',
        timestamp: NOW,
        body: { id: 'm-trace', name: 't', sessionId: 'm-session' },
      },
      {
        id: 'e2',
        type: 'span-create',
        timestamp: NOW,
        body: { id: 'm-span', traceId: 'm-trace', startTime: NOW },
      },
      {
        id: 'e3',
        type: 'score-create',
        timestamp: NOW,
        body: { id: 'm-score', traceId: 'm-trace', name: 'q', value: 1 },
      },
    ],
  });
  const ds = await seed('POST', '/api/public/v2/datasets', { name: 'm-ds' });
  await pool.query('UPDATE datasets SET id = $1 WHERE id = $2', ['m-ds-id', ds['id']]);
  for (const id of ['m-item', ...ALL.map((d) => `m-item-del-${d}`)]) {
    await seed('POST', '/api/public/dataset-items', { datasetName: 'm-ds', id, input: 1 });
  }
  for (const d of ALL) {
    await seed('POST', '/api/public/scores', {
      id: `m-score-del-${d}`,
      traceId: 'm-trace',
      name: 'q',
      value: 1,
    });
  }
  seeded.config = String(
    (await seed('POST', '/api/public/score-configs', { name: 'm-cfg', dataType: 'NUMERIC' }))['id'],
  );
  const exportOf = async () =>
    String(
      (await seed('POST', '/api/public/exports', { source: 'SCORES', format: 'CSV', frequency: 'hourly' }))[
        'id'
      ],
    );
  seeded.export = await exportOf();
  for (const d of ALL) seeded.exportsToDelete[d] = await exportOf();
  seeded.comment = String(
    (await seed('POST', '/api/public/comments', { objectType: 'TRACE', objectId: 'm-trace', content: 'c' }))[
      'id'
    ],
  );
  const modelOf = async (name: string) =>
    String(
      (
        await seed('POST', '/api/public/models', {
          modelName: name,
          matchPattern: `^${name}$`,
          unit: 'TOKENS',
          totalPrice: 1,
        })
      )['id'],
    );
  seeded.model = await modelOf('m-model');
  for (const d of ALL) seeded.modelsToDelete[d] = await modelOf(`m-model-del-${d}`);
  for (const name of [
    'm-prompt',
    'm-folder/m-prompt',
    ...ALL.flatMap((d) => [`m-prompt-del-${d}`, `m-folder/m-prompt-del-${d}`]),
  ]) {
    await seed('POST', '/api/public/v2/prompts', {
      name,
      prompt: 'hi',
      type: 'text',
      labels: ['production'],
    });
  }
  for (const runName of ['m-run', ...ALL.map((d) => `m-del-${d}`)]) {
    await seed('POST', '/api/public/dataset-run-items', {
      runName,
      datasetItemId: 'm-item',
      traceId: 'm-trace',
    });
  }
});

afterAll(async () => {
  await Promise.all(Object.values(apps).map((a) => a.close()));
  await pool?.end();
  await ch?.close();
  await pgf?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(ALL)('%s', (d) => {
  it.each(VALID)('%s', async (_, c) => {
    const res = await send(apps[d], c, d);
    const expected = (SERVED[c.served] as Deployment[]).includes(d) ? c.ok : 404;
    expect(res.statusCode, res.body).toBe(expected);
  });

  it.each(INVALID)('%s: 404 before validation where not served, else 400 naming the field', async (_, c) => {
    const res = await send(apps[d], c, d);
    if ((SERVED[c.served] as Deployment[]).includes(d)) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error ?? res.json().message).toMatch(/\w+: /);
    } else {
      expect(res.statusCode, res.body).toBe(404);
    }
  });
});

describe('the analytics store is unreachable', () => {
  let down: FastifyInstance;
  let unreachable: ClickHouseClient;
  beforeAll(async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    unreachable = createAnalyticsClient({ url: `http://127.0.0.1:${port}` });
    down = app('dual', unreachable);
  });
  afterAll(async () => {
    await down?.close();
    await unreachable?.close();
  });

  it('a read answers 503 with Retry-After', async () => {
    const res = await send(down, get('/api/public/v3/scores', 'always'), 'dual');
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('a write answers 503 and says nothing was acknowledged', async () => {
    const batch = { batch: [{ id: 'x', type: 'trace-create', timestamp: NOW, body: { id: 'down-trace' } }] };
    const res = await send(down, json('POST', '/api/public/ingestion', batch, 'always', 207), 'dual');
    expect(res.statusCode).toBe(503);
    expect(res.json().message).toMatch(/nothing was acknowledged/);
  });
});

describe('the OpenAPI document', () => {
  it('lists every authenticated route the app registered, gated or not', async () => {
    const res = await send(apps.events_only, get('/api/public/openapi.json', 'always'), 'events_only');
    const doc = res.json() as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const expected = VALID.filter(([name]) => !['GET health', 'GET ready'].includes(name)).map(
      ([, c]) =>
        `${c.method} ${
          c.template ??
          c
            .url('legacy')
            .split('?')[0]!
            .replace('/m-trace', '/{id}')
            .replace('/observations/m-span', '/observations/{id}')
            .replace('/m-session', '/{id}')
            .replace('/m-score', '/{id}')
            .replace(/\/datasets\/m-ds/, '/datasets/{datasetName}')
            .replace(/\/runs\/m-(run|del-legacy)/, '/runs/{runName}')
            .replace(/\/dataset-items\/m-item(-del-legacy)?/, '/dataset-items/{id}')
        }`,
    );
    expect(new Set(operations)).toEqual(new Set(expected));
  });
});
