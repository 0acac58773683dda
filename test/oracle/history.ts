/**
 * A history: what producers send and what the operator of a deployment does, in order. Plans (what
 * the generator draws and fast-check shrinks) are flattened here into concrete steps with ids, which
 * both the model and the runner read. Pure.
 */

export type Mode = 'release3' | 'legacy' | 'dual' | 'events_only';

/**
 * Who sends a trace: the old batch SDK (`/api/public/ingestion`), OTLP without any header, OTLP with
 * the version-4 ingestion header, and the Python SDK's OTLP exporter in a real-time (4.7+) and a
 * delayed (4.0-4.6) version.
 */
export type Producer = 'batch' | 'otlp' | 'otlp-v4' | 'sdk-realtime' | 'sdk-delayed';
export const PRODUCERS: readonly Producer[] = ['batch', 'otlp', 'otlp-v4', 'sdk-realtime', 'sdk-delayed'];

export type SpanType = 'SPAN' | 'GENERATION' | 'EVENT';
export type Level = 'DEFAULT' | 'DEBUG' | 'WARNING' | 'ERROR';

export interface TraceAttrs {
  name: string;
  userId: string;
  sessionId: string;
  tags: string[];
  release: string;
  /** Trace version; batch traces only (OTLP has no trace-level version of its own). */
  version?: string;
  environment: string;
  public: boolean;
  /** Trace metadata; batch traces only. */
  metadata: Record<string, string>;
}

export interface SpanSpec {
  id: string;
  parentId?: string;
  type: SpanType;
  name: string;
  level: Level;
  statusMessage?: string;
  /** Observation version (batch only); the trace's applies when absent. */
  version?: string;
  model?: string;
  /** Token usage a generation is sent with (never a cost: the server prices it). */
  usage?: { input: number; output: number };
  metadata: Record<string, string>;
  /** Start, in microseconds after the history's base time; OTLP producers send sub-millisecond parts. */
  startUs: number;
}

export type Traffic =
  | {
      kind: 'trace';
      producer: Producer;
      traceId: string;
      startUs: number;
      trace: TraceAttrs;
      spans: SpanSpec[];
    }
  /** `trace-create` again for an existing batch trace (same timestamp), with different fields. */
  | { kind: 'trace-update'; traceId: string; startUs: number; trace: TraceAttrs }
  /** `span-update`/`generation-update`/`event`-less update of an existing batch observation. */
  | {
      kind: 'obs-update';
      traceId: string;
      spanId: string;
      type: SpanType;
      name: string;
      level: Level;
      statusMessage: string;
    }
  | { kind: 'score'; traceId: string; scoreId: string }
  /** A batch trace and a dataset run item linking it to a dataset item (an experiment run). */
  | {
      kind: 'experiment';
      traceId: string;
      startUs: number;
      trace: TraceAttrs;
      spans: SpanSpec[];
      runName: string;
      itemId: string;
    };

/**
 * What may happen to the ingestion log (server/features/ingestion/log/) of a release-4 web; none of it may
 * show in `events_full`. Files are picked among those accepted since the last rollback (`n`-th,
 * modulo their number).
 */
export type LogEvent =
  /** A worker started and SIGKILLed `afterMs` after its drain claimed files: its claim stays leased. */
  | { kind: 'kill-drainer'; afterMs: number }
  /** A drained file's queue row pending again, as a drainer dying before its checkpoint leaves it. */
  | { kind: 'redeliver'; file: number }
  /** `observatory ingestion replay` from the time of the `from`-th request since the last rollback to now. */
  | { kind: 'replay'; from: number }
  /** A file's queue row lost (the web died between file and row, or a restore), then the sweeper run. */
  | { kind: 'sweep'; file: number };

export type Step =
  /**
   * First step of a history whose release-4 webs write through the ingestion log (release 3 has
   * none); `waitForStore` false: the workers' drain is the only writer of the store.
   */
  | { op: 'log-on'; waitForStore: boolean }
  | { op: 'log'; event: LogEvent }
  | { op: 'switch'; to: 'legacy' | 'dual' | 'events_only' }
  /** Rewind the analytics schema to 37 and run release 3. */
  | { op: 'rollback' }
  /**
   * The backfill chain, step by step as the operator's Jobs run it; `kills[i]` (ms) SIGKILLs step
   * i+1 that long after its start before it is run to the end. `concurrent`: traffic goes on while
   * it runs, until the matching `backfill-join`.
   */
  | { op: 'backfill'; concurrent: boolean; kills: (number | null)[] }
  | { op: 'backfill-join' }
  | { op: 'worker'; action: 'start' | 'kill' }
  | { op: 'send'; traffic: Traffic }
  /**
   * `DELETE /api/public/traces/{traceId}` of a trace sent before: nothing of it may be in
   * `events_full` or readable through the API afterwards, whatever is sent, drained, replayed,
   * propagated or backfilled later (a later `send` of the same traffic is an exporter's retry).
   */
  | { op: 'delete'; traceId: string };

/** The dataset item every experiment links to (created in the relational store by the runner). */
export const DATASET = { id: 'oracle-ds', name: 'oracle-dataset', itemId: 'oracle-item' } as const;

// ---- plans: the generator's shape, flattened below ----

export interface TracePlan {
  kind: 'trace';
  producer: Producer;
  /** Per span after the first: index of its parent among the earlier spans, or null (top level). */
  parents: (number | null)[];
  types: SpanType[];
  levels: Level[];
  withVersion: boolean;
  tagCount: number;
  isPublic: boolean;
  subMs: number;
}
export type TrafficPlan =
  | TracePlan
  | { kind: 'trace-update'; target: number; isPublic: boolean }
  | { kind: 'obs-update'; target: number; span: number; level: Level }
  | { kind: 'score'; target: number }
  | { kind: 'experiment'; spans: number };

export interface TrafficSlot {
  traffic: TrafficPlan;
  /** Kill or (re)start the worker before this traffic. */
  worker?: 'start' | 'kill';
  /** Then this, when the history has a log (after the worker's action, before the traffic). */
  log?: LogEvent;
}

export interface EpochPlan {
  legacy: TrafficSlot[] | null;
  /** null: this epoch never reaches dual (a rollback from legacy). */
  dual: { before: TrafficSlot[]; backfill: BackfillPlan | null; after: TrafficSlot[] } | null;
}
export interface BackfillPlan {
  concurrent: boolean;
  kills: (number | null)[];
}

export interface HistoryPlan {
  /** The ingestion log of the release-4 webs; null: they write the store directly. */
  log: { waitForStore: boolean } | null;
  release3: TrafficSlot[];
  /** Every epoch but the last ends in a rollback to release 3. */
  epochs: EpochPlan[];
  /** Traffic after the cutover; null: the history ends before it. */
  eventsOnly: TrafficSlot[] | null;
  /** Trace deletions woven into the traffic of release 4 (see `withDeletions`). */
  deletions: DeletionPlan[];
}

/**
 * A deletion after the `after`-th request of release 4 (modulo their number) of the `target`-th
 * trace sent by then; with `late`, that trace's traffic is sent again `late` requests later (or at
 * the end): an exporter's retry, a late event.
 */
export interface DeletionPlan {
  after: number;
  target: number;
  late: number | null;
}

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length]!;

/** Turns a plan into concrete steps with ids; references to traces that do not exist yet are dropped. */
export function flatten(plan: HistoryPlan): Step[] {
  const steps: Step[] = [];
  const batchTraces: { traceId: string; startUs: number; trace: TraceAttrs; spans: SpanSpec[] }[] = [];
  let traceCount = 0;
  let scoreCount = 0;
  let mode: Mode = 'release3';

  const traffic = (slots: TrafficSlot[]) => {
    for (const slot of slots) {
      if (slot.worker) steps.push({ op: 'worker', action: slot.worker });
      if (slot.log && plan.log && mode !== 'release3') steps.push({ op: 'log', event: slot.log });
      const t = concrete(slot.traffic);
      if (t) steps.push({ op: 'send', traffic: t });
    }
  };
  const concrete = (p: TrafficPlan): Traffic | undefined => {
    switch (p.kind) {
      case 'trace': {
        const n = traceCount++;
        const traceId = p.producer === 'batch' ? `tr-${n}` : hexId(n + 1, 32);
        const startUs = n * 10_000_000 + (p.producer === 'batch' ? 0 : p.subMs);
        const trace = traceAttrs(n, p.producer, p.tagCount, p.isPublic, p.withVersion);
        const spans = spanSpecs(p, n, traceId, startUs);
        // The generator's own view of each batch trace, updated by later updates (copies: steps stay as sent).
        if (p.producer === 'batch')
          batchTraces.push({ traceId, startUs, trace: { ...trace }, spans: spans.map((s) => ({ ...s })) });
        return { kind: 'trace', producer: p.producer, traceId, startUs, trace, spans };
      }
      case 'trace-update': {
        if (batchTraces.length === 0) return undefined;
        const target = pick(batchTraces, p.target);
        // Tags and metadata only grow, so merge and replace semantics of an upsert agree.
        const trace: TraceAttrs = {
          ...target.trace,
          name: `${target.trace.name}-u`,
          userId: `${target.trace.userId}-u`,
          sessionId: `${target.trace.sessionId}-u`,
          tags: [...target.trace.tags, `u${target.trace.tags.length}`],
          release: `${target.trace.release}-u`,
          version: `${target.trace.version ?? 'tv'}-u`,
          public: p.isPublic,
          metadata: Object.fromEntries(Object.keys(target.trace.metadata).map((k) => [k, 'updated'])),
        };
        target.trace = trace;
        return { kind: 'trace-update', traceId: target.traceId, startUs: target.startUs, trace };
      }
      case 'obs-update': {
        // Events have no update event of their own.
        const updatable = batchTraces.filter((t) => t.spans.some((s) => s.type !== 'EVENT'));
        if (updatable.length === 0) return undefined;
        const target = pick(updatable, p.target);
        const span = pick(
          target.spans.filter((s) => s.type !== 'EVENT'),
          p.span,
        );
        span.name = `${span.name}-u`;
        span.level = p.level;
        span.statusMessage = `updated-${scoreCount++}`;
        return {
          kind: 'obs-update',
          traceId: target.traceId,
          spanId: span.id,
          type: span.type,
          name: span.name,
          level: span.level,
          statusMessage: span.statusMessage,
        };
      }
      case 'score': {
        if (traceCount === 0) return undefined;
        return {
          kind: 'score',
          traceId: pick(batchTraces, p.target)?.traceId ?? 'tr-none',
          scoreId: `sc-${scoreCount++}`,
        };
      }
      case 'experiment': {
        // Run items link traces the way SDKs before experiment attributes run experiments: in
        // dual the trace is staged and its propagation fills the experiment columns.
        if (mode === 'events_only') return undefined;
        const n = traceCount++;
        const traceId = `ex-${n}`;
        const startUs = n * 10_000_000;
        const plan: TracePlan = {
          kind: 'trace',
          producer: 'batch',
          parents: Array.from({ length: p.spans - 1 }, (_, i) => (i === 0 ? null : i - 1)),
          types: ['SPAN', 'GENERATION', 'EVENT'],
          levels: ['DEFAULT'],
          withVersion: false,
          tagCount: 1,
          isPublic: false,
          subMs: 0,
        };
        return {
          kind: 'experiment',
          traceId,
          startUs,
          trace: traceAttrs(n, 'batch', 1, false, false),
          spans: spanSpecs(plan, n, traceId, startUs),
          runName: `run-${n}`,
          itemId: DATASET.itemId,
        };
      }
    }
  };

  if (plan.log) steps.push({ op: 'log-on', waitForStore: plan.log.waitForStore });
  traffic(plan.release3);
  plan.epochs.forEach((epoch, i) => {
    const last = i === plan.epochs.length - 1;
    if (epoch.legacy) {
      steps.push({ op: 'switch', to: 'legacy' });
      mode = 'legacy';
      traffic(epoch.legacy);
    }
    if (epoch.dual) {
      steps.push({ op: 'switch', to: 'dual' });
      mode = 'dual';
      traffic(epoch.dual.before);
      const b = epoch.dual.backfill;
      if (b) steps.push({ op: 'backfill', concurrent: b.concurrent, kills: b.kills });
      traffic(epoch.dual.after);
      if (b?.concurrent) steps.push({ op: 'backfill-join' });
    }
    if (!last) {
      steps.push({ op: 'rollback' });
      mode = 'release3';
    }
  });
  const lastEpoch = plan.epochs.at(-1);
  if (plan.eventsOnly && lastEpoch?.dual?.backfill) {
    steps.push({ op: 'switch', to: 'events_only' });
    mode = 'events_only';
    traffic(plan.eventsOnly);
  }
  return withDeletions(steps, plan.deletions);
}

type TraceTraffic = Extract<Traffic, { kind: 'trace' | 'experiment' }>;

/** The steps with each deletion (and its late retry) woven in after the requests it names. */
function withDeletions(steps: Step[], deletions: readonly DeletionPlan[]): Step[] {
  // The sends of release 4 (release 3 is the version before deletions were recorded).
  const eligible: number[] = [];
  let mode: Mode = 'release3';
  steps.forEach((s, i) => {
    if (s.op === 'switch') mode = s.to;
    if (s.op === 'rollback') mode = 'release3';
    if (s.op === 'send' && mode !== 'release3') eligible.push(i);
  });
  if (eligible.length === 0) return steps;
  const inserts = new Map<number, Step[]>();
  const after = (i: number, s: Step) => inserts.set(i, [...(inserts.get(i) ?? []), s]);
  const deleted = new Set<string>();
  for (const d of deletions) {
    const at = pick(eligible, d.after);
    const sent = steps
      .slice(0, at + 1)
      .flatMap((s) =>
        s.op === 'send' && (s.traffic.kind === 'trace' || s.traffic.kind === 'experiment') ? [s.traffic] : [],
      )
      .filter((t): t is TraceTraffic => !deleted.has(t.traceId));
    if (sent.length === 0) continue;
    const target = pick(sent, d.target);
    deleted.add(target.traceId);
    after(at, { op: 'delete', traceId: target.traceId });
    if (d.late === null) continue;
    const later = eligible.filter((i) => i > at);
    after(later[Math.min(d.late, later.length - 1)] ?? at, { op: 'send', traffic: target });
  }
  return steps.flatMap((s, i) => [s, ...(inserts.get(i) ?? [])]);
}

export function hexId(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function traceAttrs(
  n: number,
  producer: Producer,
  tagCount: number,
  isPublic: boolean,
  withVersion: boolean,
): TraceAttrs {
  const batch = producer === 'batch';
  return {
    name: `trace-${n}`,
    userId: `user-${n % 3}`,
    sessionId: `session-${n}`,
    tags: Array.from({ length: tagCount }, (_, i) => `tag${i}`),
    release: `rel-${n}`,
    ...(batch && withVersion ? { version: `tv-${n}` } : {}),
    environment: batch ? pick(['default', 'production', 'staging'], n) : 'default',
    public: batch && isPublic,
    metadata: batch ? { tm: `t${n}`, shared: 'trace' } : {},
  };
}

function spanSpecs(p: TracePlan, n: number, traceId: string, startUs: number): SpanSpec[] {
  const batch = p.producer === 'batch';
  const count = p.parents.length + 1;
  const ids = Array.from({ length: count }, (_, j) =>
    batch ? `${traceId}-o${j}` : hexId(n * 16 + j + 1, 16),
  );
  return ids.map((id, j): SpanSpec => {
    // OTLP traces have exactly one root span, the first; batch traces may have several top-level ones.
    const parentIndex = j === 0 ? null : (p.parents[j - 1] ?? (batch ? null : 0));
    const parent = parentIndex === null ? undefined : ids[Math.min(parentIndex, j - 1)];
    const type = pick(p.types, j);
    return {
      id,
      ...(parent === undefined ? {} : { parentId: parent }),
      type,
      name: `${type.toLowerCase()}-${j}`,
      level: pick(p.levels, j),
      ...(j % 2 === 1 ? { statusMessage: `status-${j}` } : {}),
      ...(batch && p.withVersion && j % 2 === 0 ? { version: `ov-${j}` } : {}),
      // Known models the server prices, and one it does not know (usage, no cost).
      ...(type === 'GENERATION'
        ? {
            model: pick(['gpt-4o', 'gpt-4o-mini', `model-${j}`], n + j),
            usage: { input: 100 + 37 * j + n, output: 20 + 11 * j },
          }
        : {}),
      metadata: batch ? { om: `o${j}`, shared: 'observation' } : ({} as Record<string, string>),
      startUs: startUs + j * 1000,
    };
  });
}

/** One line per step, for printing a failing history. */
export function describeSteps(steps: Step[]): string {
  return steps
    .map((s, i) => {
      const head = `${String(i).padStart(3)} `;
      switch (s.op) {
        case 'send': {
          const t = s.traffic;
          if (t.kind === 'trace')
            return `${head}send ${t.producer} trace ${t.traceId}: ${t.spans.map((x) => `${x.id}${x.parentId ? `<${x.parentId}` : ''}:${x.type}`).join(' ')}`;
          if (t.kind === 'experiment')
            return `${head}send experiment ${t.traceId} (${t.spans.length} spans, run ${t.runName})`;
          if (t.kind === 'obs-update')
            return `${head}send obs-update ${t.spanId} name=${t.name} level=${t.level}`;
          if (t.kind === 'trace-update')
            return `${head}send trace-update ${t.traceId} public=${t.trace.public}`;
          return `${head}send score ${t.scoreId} on ${t.traceId}`;
        }
        case 'delete':
          return `${head}delete trace ${s.traceId}`;
        case 'backfill':
          return `${head}backfill${s.concurrent ? ' (concurrent)' : ''} kills=${JSON.stringify(s.kills)}`;
        case 'switch':
          return `${head}switch to ${s.to}`;
        case 'worker':
          return `${head}worker ${s.action}`;
        case 'log-on':
          return `${head}ingestion log on${s.waitForStore ? ', the web writing the store too' : ', the drain the only writer'}`;
        case 'log':
          return `${head}log ${Object.entries(s.event)
            .map(([k, v]) => (k === 'kind' ? v : `${k}=${v}`))
            .join(' ')}`;
        default:
          return `${head}${s.op}`;
      }
    })
    .join('\n');
}
