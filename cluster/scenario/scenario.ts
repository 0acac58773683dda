/**
 * The upgrade scenario shared by the chart end-to-end suite, the demo (`npm start`) and the kind
 * run: create a release 3 ObservabilityService, send traffic from the real SDKs, walk it through
 * Legacy, Dual and the backfill to EventsOnly, and count what moved. Everything talks to a
 * `Platform` so the same steps run on the local cluster and on kind.
 */
import { context, type Tracer, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Langfuse } from 'langfuse';
import type { RunResult } from '../helm.ts';

export type { RunResult };

import { waitFor } from '../wait.ts';

export interface Obsvc {
  metadata: { name: string; namespace: string; generation: number; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: {
    state?: string;
    phase?: string;
    observedGeneration?: number;
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      observedGeneration?: number;
    }[];
    backfill?: { completedSteps?: number; progress?: string; currentJob?: string };
    blockedBy?: string[];
  };
}

/** The datastore settings every ObservabilityService of the scenario uses (Secret `datastores`). */
export const DATASTORES = {
  postgres: { urlSecretRef: { name: 'datastores', key: 'database' } },
  clickhouse: { urlSecretRef: { name: 'datastores', key: 'clickhouse' } },
  redis: { urlSecretRef: { name: 'datastores', key: 'redis' } },
};

export interface Project {
  projectId: string;
  publicKey: string;
  secretKey: string;
}

/** What the scenario needs from a cluster with the operator and the datastores. */
export interface Platform {
  ns: string;
  kubectl(args: string[], stdin?: string): RunResult;
  get(name: string): Promise<Obsvc>;
  waitFor(name: string, what: string, check: (o: Obsvc) => boolean, timeoutMs?: number): Promise<Obsvc>;
  /** Base URL of a ready web Pod, reachable from this process. */
  webUrl(): Promise<string>;
  query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  createProject(name: string): Promise<Project>;
  /** Spec fields every apply carries besides the stage's own (e.g. `blobStorage`). */
  specExtras?: Record<string, unknown>;
}

export const condition = (o: Obsvc, type: string) => o.status?.conditions?.find((c) => c.type === type);
export const isTrue = (o: Obsvc, type: string) => condition(o, type)?.status === 'True';

export function manifest(p: Platform, name: string, extra: Record<string, unknown>) {
  return {
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'ObservabilityService',
    metadata: { name, namespace: p.ns },
    spec: {
      image: 'observatory:dev',
      datastores: DATASTORES,
      web: { replicas: 1 },
      worker: { replicas: 1 },
      // A short quiet period: the scenario's old SDK stops sending well before the cutover.
      cutover: { approval: 'Manual', producerQuietPeriod: '1m' },
      ...p.specExtras,
      ...extra,
    },
  };
}

/** Server-side apply of the whole spec, as GitOps would; throws with kubectl's message when refused. */
export function applySpec(p: Platform, name: string, extra: Record<string, unknown>): void {
  const r = p.kubectl(
    ['apply', '--server-side', '--field-manager=scenario', '-f', '-'],
    JSON.stringify(manifest(p, name, extra)),
  );
  if (r.code !== 0) throw new Error(`kubectl apply refused: ${r.stderr}`);
}

const upgrade = { backupConfirmed: true };
export const SPECS = {
  release3: { release: '3' },
  legacy: { release: '4', writeMode: 'Legacy', upgrade },
  dual: { release: '4', writeMode: 'Dual', backfill: { enabled: true }, upgrade },
  eventsOnly: {
    release: '4',
    writeMode: 'EventsOnly',
    nativeOtelBehaviour: 'Direct',
    backfill: { enabled: true },
    upgrade,
  },
} as const;

/** The container env of `<name>-<component>` as a map. */
export function deploymentEnv(
  p: Platform,
  name: string,
  component: 'web' | 'worker',
): Record<string, string> {
  const r = p.kubectl(['get', 'deploy', `${name}-${component}`, '-n', p.ns, '-o', 'json']);
  if (r.code !== 0) throw new Error(r.stderr);
  const env = JSON.parse(r.stdout).spec.template.spec.containers[0].env as { name: string; value?: string }[];
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
}

export async function createRelease3(p: Platform, name: string): Promise<{ o: Obsvc; project: Project }> {
  applySpec(p, name, SPECS.release3);
  const o = await p.waitFor(
    name,
    'Release3 and Ready',
    (x) => x.status?.state === 'Release3' && isTrue(x, 'Ready'),
  );
  return { o, project: await p.createProject(`scenario-${name}`) };
}

export interface Sent {
  sdkTraces: string[];
  otelTraces: string[];
}

/**
 * Traffic from the real SDKs: `count` traces from the npm `langfuse` 3.x SDK (each a trace, a span
 * and a generation) and `count` from an OTel exporter (each a root span and a child span).
 */
export async function sendTraffic(p: Platform, project: Project, tag: string, count = 5): Promise<Sent> {
  const url = await p.webUrl();
  const sdk = new Langfuse({ publicKey: project.publicKey, secretKey: project.secretKey, baseUrl: url });
  const sdkTraces: string[] = [];
  for (let i = 0; i < count; i++) {
    const t = sdk.trace({
      name: `${tag}-sdk-${i}`,
      userId: `user-${i % 3}`,
      sessionId: `session-${tag}`,
    });
    t.span({ name: `${tag}-retrieve`, input: { q: i } }).end({ output: { docs: 3 } });
    t.generation({ name: `${tag}-llm`, model: 'gpt-4o', input: 'hi', usage: { input: 10, output: 5 } }).end({
      output: 'hello',
    });
    sdkTraces.push(t.id);
  }
  await sdk.shutdownAsync();

  const otelTraces = await sendOtel(url, project, tag, count);
  return { sdkTraces, otelTraces };
}

export interface Counts {
  traces: number;
  observations: number;
  eventsFull: number;
  /** Legacy traces without a root observation in events_full (`t-<id>`, or an OTLP trace's own root). */
  missingTraces: number;
  /** Legacy observations without a row of the same span id in events_full. */
  missingObservations: number;
}

/** The legacy tables against events_full for one project. */
export async function countData(p: Platform, projectId: string): Promise<Counts> {
  const one = async (sql: string) =>
    Number((await p.query<{ n: string }>(sql, { project: projectId }))[0]?.n ?? 0);
  const traces = await one('SELECT count(DISTINCT id) AS n FROM traces WHERE project_id = {project:String}');
  const observations = await one(
    'SELECT count(DISTINCT id) AS n FROM observations WHERE project_id = {project:String}',
  );
  // Release 3 and Legacy have no events_full yet: nothing has moved.
  const hasEvents = await one(
    "SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'events_full'",
  );
  if (!hasEvents)
    return { traces, observations, eventsFull: 0, missingTraces: traces, missingObservations: observations };
  const events = `SELECT DISTINCT span_id FROM events_full WHERE project_id = {project:String}`;
  const [eventsFull, missingTraces, missingObservations] = await Promise.all([
    one('SELECT count(DISTINCT span_id) AS n FROM events_full WHERE project_id = {project:String}'),
    // A trace is its root observation: the virtual root t-<id> of a batch trace, or an OTLP trace's own root span.
    one(
      `SELECT count(DISTINCT id) AS n FROM traces WHERE project_id = {project:String} AND id NOT IN (SELECT DISTINCT trace_id FROM events_full WHERE project_id = {project:String} AND parent_span_id = '')`,
    ),
    one(
      `SELECT count(DISTINCT id) AS n FROM observations WHERE project_id = {project:String} AND id NOT IN (${events})`,
    ),
  ]);
  return { traces, observations, eventsFull, missingTraces, missingObservations };
}

/** Waits until every legacy trace and observation is in events_full (propagation runs about every minute). */
export async function waitAllMoved(
  p: Platform,
  projectId: string,
  timeoutMs = 330_000,
  onCounts?: (c: Counts) => void,
): Promise<Counts> {
  let last: Counts | undefined;
  try {
    return await waitFor(
      'every legacy trace and observation in events_full',
      async () => {
        last = await countData(p, projectId);
        onCounts?.(last);
        return last.missingTraces === 0 && last.missingObservations === 0 ? last : undefined;
      },
      { timeoutMs, intervalMs: 5_000 },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last counts ${JSON.stringify(last)}`);
  }
}

/** `kubectl annotate --overwrite` of the object, as a human would; throws with kubectl's message. */
function annotate(p: Platform, name: string, annotation: string): void {
  const r = p.kubectl(['annotate', 'obsvc', name, '-n', p.ns, '--overwrite', annotation]);
  if (r.code !== 0) throw new Error(r.stderr);
}

/** Approves the cutover of the current generation. */
export function approveCutover(p: Platform, name: string, generation: number): void {
  annotate(p, name, `observatory.dev/approve-cutover=${generation}`);
}

export function retryBackfill(p: Platform, name: string, step: number): void {
  annotate(p, name, `observatory.dev/retry-backfill=${step}`);
}

export interface Step {
  name: string;
  ms: number;
}

/** Runs `body` and records how long it took under `name`. */
export async function timed<T>(steps: Step[], name: string, body: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await body();
  } finally {
    steps.push({ name, ms: Math.round(performance.now() - started) });
  }
}

/**
 * Release 3 -> Legacy -> Dual (more traffic) -> backfill -> everything moved -> EventsOnly after
 * approval. `hooks` lets callers add checks or faults at each stage; the demo only prints.
 */
export async function walkToEventsOnly(
  p: Platform,
  name: string,
  project: Project,
  hooks: {
    atLegacy?: (o: Obsvc) => Promise<void>;
    atDual?: (o: Obsvc) => Promise<void>;
    /** Runs from the moment Dual is applied until the backfill is complete (for faults). */
    duringBackfill?: () => Promise<void>;
    beforeApproval?: (o: Obsvc) => Promise<void>;
    /** Told the name of each step as it starts (the demo prints it). */
    onStep?: (name: string) => void;
    /** Told the counts at each look while the dual-written data propagates (the demo prints them). */
    onPropagation?: (c: Counts) => void;
    /** `spec.backfill` tuning (chunkRows, throttleMs, concurrency) from Dual on. */
    backfillTuning?: Record<string, number>;
    /**
     * `spec.backup` is among the platform's specExtras: the specs leave out backupConfirmed, so the
     * operator backs up before the move to release 4 (and, as always with spec.backup, the cutover).
     */
    operatorBackups?: boolean;
  } = {},
  steps: Step[] = [],
): Promise<{ final: Obsvc; steps: Step[]; sent: Sent[] }> {
  const step = <T>(stepName: string, body: () => Promise<T>) => {
    hooks.onStep?.(stepName);
    return timed(steps, stepName, body);
  };
  const sent: Sent[] = [];
  const confirmed = <S extends { upgrade: unknown }>(spec: S) => {
    if (!hooks.operatorBackups) return spec;
    const { upgrade: _taken, ...rest } = spec;
    return rest;
  };
  const withTuning = (spec: typeof SPECS.dual | typeof SPECS.eventsOnly) => ({
    ...confirmed(spec),
    backfill: { ...spec.backfill, ...hooks.backfillTuning },
  });
  const legacy = await step('Release3 -> Legacy (preflight, backup, schema migration)', async () => {
    applySpec(p, name, confirmed(SPECS.legacy));
    return p.waitFor(name, 'Legacy and Ready', (x) => x.status?.state === 'Legacy' && isTrue(x, 'Ready'));
  });
  await hooks.atLegacy?.(legacy);
  sent.push(await sendTraffic(p, project, 'legacy'));

  let during: Promise<void> | undefined;
  const dual = await step('Legacy -> Dual', async () => {
    applySpec(p, name, withTuning(SPECS.dual));
    // Started now: the backfill Jobs begin as soon as Dual is reached and take seconds on small data.
    during = hooks.duringBackfill?.();
    during?.catch(() => {});
    return p.waitFor(name, 'Dual and Ready', (x) => x.status?.state === 'Dual' && isTrue(x, 'Ready'));
  });
  await hooks.atDual?.(dual);
  // Old-SDK traffic during Dual goes to the staging table; the worker propagates it to events_full.
  sent.push(await sendTraffic(p, project, 'dual'));

  await step('backfill Jobs', async () => {
    await p.waitFor(name, 'BackfillComplete', (x) => isTrue(x, 'BackfillComplete'), 600_000);
    await during;
  });
  await step('propagation of dual-written data', () =>
    waitAllMoved(p, project.projectId, undefined, hooks.onPropagation),
  );

  const waiting = await step('cutover checks (quiet period, propagation)', async () => {
    applySpec(p, name, withTuning(SPECS.eventsOnly));
    return p.waitFor(
      name,
      'cutover checks passed, waiting for approval',
      (x) =>
        x.status?.state === 'Dual' &&
        isTrue(x, 'PropagationHealthy') &&
        condition(x, 'CutoverApproved')?.status === 'False',
    );
  });
  await hooks.beforeApproval?.(waiting);
  const final = await step('approved -> EventsOnly', async () => {
    approveCutover(p, name, waiting.metadata.generation);
    return p.waitFor(
      name,
      'EventsOnly and Ready',
      (x) => x.status?.state === 'EventsOnly' && isTrue(x, 'Ready'),
      600_000,
    );
  });
  return { final, steps, sent };
}

/** What an old SDK and the legacy endpoints get after the cutover, and where OTLP now writes. */
export async function afterCutover(p: Platform, project: Project) {
  const url = await p.webUrl();
  const auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
  const batch = await fetch(`${url}/api/public/ingestion`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      batch: [
        { id: 'late-1', type: 'trace-create', timestamp: new Date().toISOString(), body: { name: 'late' } },
        { id: 'late-2', type: 'span-create', timestamp: new Date().toISOString(), body: { name: 'late' } },
      ],
    }),
  });
  const batchBody = (await batch.json()) as { errors: { status: number }[]; successes: unknown[] };
  const legacyStatus = (
    await fetch(`${url}/api/public/traces`, { method: 'POST', headers: { authorization: auth } })
  ).status;
  const before = await countData(p, project.projectId);
  const [otel = ''] = await sendOtel(url, project, 'after', 1);
  const direct = Number(
    (
      await p.query<{ n: string }>(
        'SELECT count() AS n FROM events_full WHERE project_id = {project:String} AND trace_id = {trace:String}',
        { project: project.projectId, trace: otel },
      )
    )[0]?.n ?? 0,
  );
  return { batchStatus: batch.status, batchBody, legacyStatus, before, otelTrace: otel, directRows: direct };
}

/**
 * Runs `send` with a tracer whose spans go to the service through the OTLP/HTTP protobuf exporter
 * as `project`, then flushes and shuts the exporter down. Batched as applications do: one export
 * per span hits the exporter's limit of concurrent exports past a few dozen spans.
 */
export async function withOtlpTracer<T>(
  url: string,
  project: Project,
  name: string,
  send: (tracer: Tracer) => T,
): Promise<T> {
  const auth = Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64');
  const exporter = new OTLPTraceExporter({
    url: `${url}/api/public/otel/v1/traces`,
    headers: { Authorization: `Basic ${auth}` },
  });
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  const sent = send(provider.getTracer(name));
  await provider.forceFlush();
  await provider.shutdown();
  return sent;
}

/** `count` traces (a root span and a child each) through the OTLP/HTTP protobuf exporter; returns their ids. */
export function sendOtel(url: string, project: Project, tag: string, count: number): Promise<string[]> {
  return withOtlpTracer(url, project, 'scenario', (tracer) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      // No context manager is registered here: the child gets its parent explicitly.
      const root = tracer.startSpan(`${tag}-otel-${i}`);
      tracer.startSpan(`${tag}-otel-child`, {}, trace.setSpan(context.active(), root)).end();
      ids.push(root.spanContext().traceId);
      root.end();
    }
    return ids;
  });
}
