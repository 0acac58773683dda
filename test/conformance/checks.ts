/**
 * What each SDK operation must have left on the server, read back through the server's own APIs
 * (v2 observations, v3 scores, the legacy reads, datasets, prompts, comments, score configs),
 * whatever the SDK reported. One check per operation, shared by the Python and JS/TS drivers.
 */
import { expect } from 'vitest';
import { api, type ConformanceEnv, eventually, type Mode, type ModeServer } from './env.ts';

/** The spec's Limits and Errors tables, restated for the versions under test. */
export type Tier = 'real-time' | 'delayed' | 'older' | 'refused';

/** Propagation takes a completed 3-minute staging partition: up to about four minutes here. */
const STAGED_WITHIN_MS = 330_000;
const DIRECT_WITHIN_MS = 60_000;
const STAGING_WINDOW_MS = 180_000;
/** How long before a check the SDK's last send may lie (its script's exit, the flush). */
const STAGING_CHECK_MARGIN_MS = 30_000;

interface ObservationV2 {
  id: string;
  traceId: string;
  type: string;
  name: string;
  userId?: string | null;
  usageDetails?: Record<string, number>;
}

async function observationsV2(s: ModeServer, traceId: string): Promise<ObservationV2[]> {
  const r = await api<{ data: ObservationV2[] }>(
    s,
    'GET',
    `/api/public/v2/observations?traceId=${traceId}&fields=core,basic,usage,trace_context&limit=100`,
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}

/**
 * The trace as root, child span and generation. Its user is on the root; on the generation too
 * when something propagated it: the SDK (client side) or the dual-write propagation job.
 */
function expectTraceTree(rows: ObservationV2[], caseId: string, userOnChildren: boolean) {
  const names = rows.map((r) => r.name);
  expect(names).toEqual(expect.arrayContaining([`${caseId}-root`, 'step', 'llm']));
  expect(rows.find((r) => r.name === `${caseId}-root`)?.userId).toBe(`${caseId}-user`);
  const llm = rows.find((r) => r.name === 'llm')!;
  expect(llm.type).toBe('GENERATION');
  expect(llm.usageDetails).toMatchObject({ input: 10, output: 20 });
  expect(llm.userId).toBe(userOnChildren ? `${caseId}-user` : null);
}

interface LegacyTrace {
  id: string;
  name: string | null;
  userId: string | null;
  sessionId: string | null;
  observations: { name: string; type: string; output: unknown; usage: { input: number; output: number } }[];
}

async function expectLegacyTrace(s: ModeServer, traceId: string, caseId: string) {
  const trace = await eventually(
    `legacy trace ${traceId}`,
    async () => {
      const r = await api<LegacyTrace>(s, 'GET', `/api/public/traces/${traceId}`);
      const names = r.status === 200 ? r.body.observations.map((o) => o.name) : [];
      return names.includes('step') && names.includes('llm') ? r.body : undefined;
    },
    DIRECT_WITHIN_MS,
  );
  expect(trace).toMatchObject({ id: traceId, userId: `${caseId}-user`, sessionId: `${caseId}-session` });
  const step = trace.observations.find((o) => o.name === 'step');
  expect(step?.output).toBe('step-out');
  const llm = trace.observations.find((o) => o.name === 'llm');
  expect(llm).toMatchObject({ type: 'GENERATION', usage: { input: 10, output: 20 } });
}

/** Tracing: where the spans must be readable in this mode, and how soon, by the producer's tier. */
export async function checkTracing(
  env: ConformanceEnv,
  mode: Mode,
  tier: Tier,
  traceId: string,
  caseId: string,
  sdk: { name: string; version: string; propagatesClientSide: boolean },
) {
  const s = env.modes[mode];
  if (mode === 'legacy') {
    await expectLegacyTrace(s, traceId, caseId);
    expect((await api(s, 'GET', `/api/public/v2/observations?traceId=${traceId}`)).status).toBe(404);
    return;
  }
  if (mode === 'events_only' && tier === 'refused') {
    // Rejected at ingestion: nothing written, and the producer is on record for the cutover.
    expect(await observationsV2(s, traceId)).toEqual([]);
    expect((await api(s, 'GET', `/api/public/traces/${traceId}`)).status).toBe(404);
    await eventually(
      `producer ${sdk.name}@${sdk.version} recorded`,
      async () => {
        const r = await fetch(`${env.workerUrl}/api/producers?since=1h`);
        const body = (await r.json()) as {
          producers: { publicKey: string; sdkName: string; sdkVersion: string; path: string }[];
        };
        return body.producers.find(
          (p) => p.publicKey === s.publicKey && p.sdkName === sdk.name && p.sdkVersion === sdk.version,
        );
      },
      30_000,
    );
    return;
  }
  if (mode === 'dual') {
    // A producer that is not real-time goes through staging: nothing in the version 4 tables yet.
    // Asserted only while no staging window can have closed since the SDK sent (propagation
    // takes a window once it has closed).
    if (tier !== 'real-time' && Date.now() % STAGING_WINDOW_MS > STAGING_CHECK_MARGIN_MS) {
      expect(await observationsV2(s, traceId)).toEqual([]);
    }
    await expectLegacyTrace(s, traceId, caseId);
  } else {
    expect((await api(s, 'GET', `/api/public/traces/${traceId}`)).status).toBe(404);
  }
  const within = mode === 'dual' && tier !== 'real-time' ? STAGED_WITHIN_MS : DIRECT_WITHIN_MS;
  const rows = await eventually(
    `v2 observations of ${traceId}`,
    async () => {
      const rows = await observationsV2(s, traceId);
      return rows.some((r) => r.name === 'llm') && rows.length >= 3 ? rows : undefined;
    },
    within,
  );
  expectTraceTree(rows, caseId, sdk.propagatesClientSide || mode === 'dual');
}

interface ScoreV3 {
  id: string;
  name: string;
  value: number;
  traceId?: string | null;
  comment?: string | null;
  configId?: string | null;
}

/** A score reaches the v3 scores API in every mode. */
export async function checkScore(
  s: ModeServer,
  traceId: string,
  name: string,
  value: number,
  configId?: string,
) {
  const score = await eventually(
    `score ${name} on ${traceId}`,
    async () => {
      const r = await api<{ data: ScoreV3[] }>(
        s,
        'GET',
        `/api/public/v3/scores?traceId=${traceId}&name=${encodeURIComponent(name)}`,
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data[0];
    },
    DIRECT_WITHIN_MS,
  );
  expect(score.value).toBe(value);
  if (configId) expect(score.configId).toBe(configId);
}

/** A dataset and its two items (the third create was an upsert of the first). */
export async function checkDataset(s: ModeServer, name: string, itemIds: string[]) {
  const dataset = await api<{ name: string }>(
    s,
    'GET',
    `/api/public/v2/datasets/${encodeURIComponent(name)}`,
  );
  expect(dataset.status, JSON.stringify(dataset.body)).toBe(200);
  expect(dataset.body.name).toBe(name);
  const items = await api<{ data: { id: string; input: unknown; status: string }[] }>(
    s,
    'GET',
    `/api/public/dataset-items?datasetName=${encodeURIComponent(name)}`,
  );
  expect(items.status, JSON.stringify(items.body)).toBe(200);
  expect(items.body.data.map((i) => i.id).sort()).toEqual([...itemIds].sort());
  expect(items.body.data.every((i) => i.status === 'ACTIVE')).toBe(true);
}

/** A text prompt's versions and labels, and a chat prompt, as the server serves them. */
export async function checkPrompts(s: ModeServer, text: string, chat: string) {
  const byLabel = await api<{ version: number; prompt: unknown; labels: string[]; config: unknown }>(
    s,
    'GET',
    `/api/public/v2/prompts/${encodeURIComponent(text)}?label=production`,
  );
  expect(byLabel.status, JSON.stringify(byLabel.body)).toBe(200);
  expect(byLabel.body).toMatchObject({ version: 1, prompt: 'Hello {{name}}', config: { temperature: 0.1 } });
  expect(byLabel.body.labels).toContain('production');
  const v2 = await api<{ version: number; labels: string[] }>(
    s,
    'GET',
    `/api/public/v2/prompts/${encodeURIComponent(text)}?version=2`,
  );
  expect(v2.body).toMatchObject({ version: 2 });
  expect(v2.body.labels).toEqual(expect.arrayContaining(['staging', 'latest']));
  const chatPrompt = await api<{ type: string; prompt: { role: string; content: string }[] }>(
    s,
    'GET',
    `/api/public/v2/prompts/${encodeURIComponent(chat)}`,
  );
  expect(chatPrompt.body.type).toBe('chat');
  expect(chatPrompt.body.prompt.map((m) => m.role)).toEqual(['system', 'user']);
}

/** A comment on a trace, listed for that trace. */
export async function checkComment(s: ModeServer, traceId: string, content: string) {
  const r = await api<{ data: { content: string; objectType: string; objectId: string }[] }>(
    s,
    'GET',
    `/api/public/comments?objectType=TRACE&objectId=${traceId}`,
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.data).toEqual([expect.objectContaining({ content, objectType: 'TRACE', objectId: traceId })]);
}

/** A score config, read back by id. */
export async function checkScoreConfig(s: ModeServer, id: string, name: string) {
  const r = await api<{ id: string; name: string; dataType: string; minValue: number; maxValue: number }>(
    s,
    'GET',
    `/api/public/score-configs/${id}`,
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ id, name, dataType: 'NUMERIC', minValue: 0, maxValue: 1 });
}

/** An annotation queue's items as the public API reads them: the one the SDK kept, completed. */
export async function checkQueueItems(s: ModeServer, queueId: string, itemId: string, traceId: string) {
  const r = await api<{
    data: { id: string; objectId: string; status: string; completedAt: string | null }[];
  }>(s, 'GET', `/api/public/annotation-queues/${queueId}/items`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.data).toEqual([
    expect.objectContaining({
      id: itemId,
      objectId: traceId,
      status: 'COMPLETED',
      completedAt: expect.any(String),
    }),
  ]);
}
