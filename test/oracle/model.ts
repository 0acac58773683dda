/**
 * What `events_full` (read with FINAL) must hold after a history, from the spec's rules alone:
 * - `legacy` and release 3 write no events tables; rewinding to 37 drops them (the legacy
 *   `traces`/`observations` survive); events_only refuses every batch event but scores.
 * - `dual`: old SDKs (batch, OTLP without client-side propagation) go to the legacy tables and are
 *   staged, then propagated with the trace's attributes (user, session, tags, release, version,
 *   metadata) under the virtual root `t-<traceId>`; producers that propagate on the client side
 *   (ingestion-version header 4, Python SDK 4.7+) are written directly as sent, and to the legacy
 *   tables too.
 * - events_only writes every OTLP span directly, as sent.
 * - The historic backfill (run in dual) makes a virtual root `t-<traceId>` (type SPAN, empty
 *   parent) per legacy trace and one child event per legacy observation (top-level ones under the
 *   virtual root), with the trace's name, user, session, version, release, tags, public and
 *   bookmarked flags, but not its metadata; step 4 enriches experiment traces, as the propagation
 *   of a staged trace linked to a run item does (an experiment from an SDK before experiment
 *   attributes).
 * - Replacing merge: one row per span, the last written version wins; so where the order of writes
 *   is not fixed by the history (a backfill running alongside traffic, a span both written directly
 *   and backfilled), each version that may be last is a candidate, and rows that may or may not
 *   exist are optional. Trace-level attributes are those of the trace's latest state everywhere.
 * - Cost: a generation sent with a known model and usage but no cost carries the model's id, its
 *   usage with `total`, and the provider's published price of it, on every road into the events
 *   tables (direct, propagated, backfilled), however often it was updated since; an unknown model
 *   keeps its usage and has no cost.
 * - A deleted trace has no row, whatever was sent, drained, replayed, propagated or backfilled after
 *   its deletion, and whatever of it was accepted before (tombstones, server/features/tombstones/).
 * Pure.
 */
import { DATASET, type Producer, type SpanSpec, type Step, type TraceAttrs } from './history.ts';

export interface EventFields {
  parent_span_id: string;
  type: string;
  name: string;
  trace_name: string;
  user_id: string;
  session_id: string;
  tags: string[];
  release: string;
  version: string;
  environment: string;
  public: boolean;
  bookmarked: boolean;
  level: string;
  status_message: string;
  provided_model_name: string;
  model_id: string;
  usage_details: Record<string, number>;
  cost_details: Record<string, number>;
  /** Exactly these keys; undefined: not compared (OTLP rows carry resource and scope metadata). */
  metadata?: Record<string, string>;
  /** Microseconds since the epoch; undefined: not compared. */
  start_us?: number;
  /** '*' is any non-empty id (the run id the server derives). */
  experiment_id: string;
  experiment_name: string;
  experiment_item_id: string;
  experiment_dataset_id: string;
  experiment_item_root_span_id: string;
}

export interface ExpectedRow {
  traceId: string;
  spanId: string;
  /** false: the row may be absent (its presence depends on an order the history leaves open). */
  required: boolean;
  /** The row, when present, equals one of these. */
  candidates: EventFields[];
}

export interface Expectation {
  /** false: the history ends on release 3, whose schema has no events tables. */
  eventsTablesExist: boolean;
  rows: ExpectedRow[];
  /** Traces that must have exactly one root row (others: at most one). */
  rootRequired: string[];
}

/** Producers whose spans are written directly in dual (they propagate shared attributes themselves). */
export const propagatesClientSide = (p: Producer): boolean => p === 'otlp-v4' || p === 'sdk-realtime';

interface LegacyObservation {
  spec: SpanSpec;
  firstWrite: number;
}
interface LegacyTrace {
  traceId: string;
  producer: Producer;
  trace: TraceAttrs;
  startUs: number;
  firstWrite: number;
  observations: Map<string, LegacyObservation>;
  experiment?: { runName: string; itemId: string };
}
interface DirectSpan {
  producer: Producer;
  trace: TraceAttrs;
  spec: SpanSpec;
}
interface Epoch {
  /** Spans staged in dual (by trace id: span ids; the trace record itself as `t-<id>`). */
  staged: Map<string, Set<string>>;
  direct: Map<string, Map<string, DirectSpan>>;
  backfill?: { start: number; end: number };
}

const newEpoch = (): Epoch => ({ staged: new Map(), direct: new Map() });
const rootId = (traceId: string) => `t-${traceId}`;
const toMs = (us: number) => Math.floor(us / 1000) * 1000;

export function expectedEvents(steps: Step[], baseUs: number): Expectation {
  const legacy = new Map<string, LegacyTrace>();
  /** Deleted traces: nothing of them is in the store after the history, whatever came after. */
  const deleted = new Set<string>();
  let mode: 'release3' | 'legacy' | 'dual' | 'events_only' = 'release3';
  let epoch = newEpoch();

  const stage = (traceId: string, spanId: string) => {
    const set = epoch.staged.get(traceId) ?? new Set<string>();
    set.add(spanId);
    epoch.staged.set(traceId, set);
  };
  const writeLegacyTrace = (
    i: number,
    traceId: string,
    producer: Producer,
    trace: TraceAttrs,
    startUs: number,
    spans: SpanSpec[],
  ) => {
    const t = legacy.get(traceId) ?? {
      traceId,
      producer,
      trace,
      startUs,
      firstWrite: i,
      observations: new Map<string, LegacyObservation>(),
    };
    t.trace = trace;
    for (const s of spans) {
      const o = t.observations.get(s.id);
      t.observations.set(s.id, { spec: { ...s }, firstWrite: o?.firstWrite ?? i });
    }
    legacy.set(traceId, t);
    return t;
  };

  steps.forEach((step, i) => {
    switch (step.op) {
      case 'switch':
        mode = step.to;
        return;
      case 'rollback':
        mode = 'release3';
        epoch = newEpoch();
        return;
      case 'backfill':
        // A chain run to the end before the next step, or alongside traffic until its join.
        epoch.backfill = { start: i, end: step.concurrent ? Number.POSITIVE_INFINITY : i };
        return;
      case 'backfill-join':
        if (epoch.backfill) epoch.backfill.end = i;
        return;
      // The ingestion log changes how and when a write reaches the store, never what it writes.
      case 'log-on':
      case 'log':
      case 'worker':
        return;
      case 'delete':
        deleted.add(step.traceId);
        return;
      case 'send':
        break;
    }
    const t = step.traffic;
    if (t.kind === 'score') return;
    if (mode === 'events_only') {
      if (t.kind !== 'trace' || t.producer === 'batch') return; // refused, or a score
      const spans = new Map(epoch.direct.get(t.traceId));
      for (const s of t.spans) spans.set(s.id, { producer: t.producer, trace: t.trace, spec: s });
      epoch.direct.set(t.traceId, spans);
      return;
    }
    const dual = mode === 'dual';
    if (t.kind === 'trace' || t.kind === 'experiment') {
      const producer = t.kind === 'trace' ? t.producer : 'batch';
      const lt = writeLegacyTrace(i, t.traceId, producer, t.trace, t.startUs, t.spans);
      if (t.kind === 'experiment') lt.experiment = { runName: t.runName, itemId: t.itemId };
      if (!dual) return;
      if (propagatesClientSide(producer)) {
        const spans = new Map(epoch.direct.get(t.traceId));
        for (const s of t.spans) spans.set(s.id, { producer, trace: t.trace, spec: s });
        epoch.direct.set(t.traceId, spans);
      } else {
        stage(t.traceId, rootId(t.traceId));
        for (const s of t.spans) stage(t.traceId, s.id);
      }
      return;
    }
    const lt = legacy.get(t.traceId);
    if (!lt) return;
    if (t.kind === 'trace-update') {
      lt.trace = t.trace;
      if (dual) stage(t.traceId, rootId(t.traceId));
      return;
    }
    const o = lt.observations.get(t.spanId);
    if (!o) return;
    o.spec = { ...o.spec, name: t.name, level: t.level, statusMessage: t.statusMessage };
    if (dual) stage(t.traceId, t.spanId);
  });

  if (mode === 'release3') return { eventsTablesExist: false, rows: [], rootRequired: [] };

  const rows: ExpectedRow[] = [];
  const rootRequired: string[] = [];
  const bf = epoch.backfill;
  /** 'yes': the backfill surely read it; 'maybe': it ran alongside the write; 'no'. */
  const backfilled = (firstWrite: number): 'yes' | 'maybe' | 'no' =>
    !bf ? 'no' : firstWrite < bf.start ? 'yes' : firstWrite < bf.end ? 'maybe' : 'no';
  const traceIds = new Set([...legacy.keys(), ...epoch.direct.keys()]);
  for (const traceId of traceIds) {
    const lt = legacy.get(traceId);
    const staged = epoch.staged.get(traceId) ?? new Set<string>();
    const direct = epoch.direct.get(traceId) ?? new Map<string, DirectSpan>();
    // The backfill's step 4 and every propagation of a staged trace fill the experiment columns
    // of the trace's rows from its run item.
    const experiment =
      lt?.experiment && (backfilled(lt.firstWrite) === 'yes' || staged.size > 0)
        ? {
            experiment_id: '*',
            experiment_name: lt.experiment.runName,
            experiment_item_id: lt.experiment.itemId,
            experiment_dataset_id: DATASET.id,
            experiment_item_root_span_id: rootId(traceId),
          }
        : NO_EXPERIMENT;

    if (lt) {
      const otlp = !isBatch(lt.producer);
      const rootBackfill = backfilled(lt.firstWrite);
      const rootStaged = staged.has(rootId(traceId));
      if (rootStaged || rootBackfill !== 'no') {
        const required = rootStaged || rootBackfill === 'yes';
        // An OTLP trace has a root span of its own: it may stay the root instead of a virtual one.
        rows.push({
          traceId,
          spanId: rootId(traceId),
          required: required && !otlp,
          candidates: [{ ...virtualRoot(lt, baseUs), ...experiment }],
        });
        if (required && !otlp) rootRequired.push(traceId);
      }
      for (const [spanId, o] of lt.observations) {
        const candidates: EventFields[] = [];
        const b = backfilled(o.firstWrite);
        const legacyPath = (propagated: boolean) => {
          const child = { ...legacyChild(lt, o.spec, propagated, baseUs), ...experiment };
          candidates.push(child);
          if (otlp && o.spec.parentId === undefined) candidates.push({ ...child, parent_span_id: '' });
        };
        if (b !== 'no') legacyPath(false);
        if (staged.has(spanId)) legacyPath(true);
        const d = direct.get(spanId);
        if (d) candidates.push(...directRows(d, baseUs, true));
        if (candidates.length === 0) continue;
        const required = b === 'yes' || staged.has(spanId) || d !== undefined;
        rows.push({ traceId, spanId, required, candidates });
        if (required && otlp && o.spec.parentId === undefined) rootRequired.push(traceId);
      }
    } else {
      for (const [spanId, d] of direct) {
        rows.push({ traceId, spanId, required: true, candidates: directRows(d, baseUs, false) });
        if (d.spec.parentId === undefined) rootRequired.push(traceId);
      }
    }
  }
  return {
    eventsTablesExist: true,
    rows: rows.filter((r) => !deleted.has(r.traceId)),
    rootRequired: rootRequired.filter((id) => !deleted.has(id)),
  };
}

const NO_EXPERIMENT = {
  experiment_id: '',
  experiment_name: '',
  experiment_item_id: '',
  experiment_dataset_id: '',
  experiment_item_root_span_id: '',
};

const isBatch = (p: Producer) => p === 'batch';

/**
 * USD per token, OpenAI's published prices (openai.com/api/pricing, 2026-11: gpt-4o $2.50 / $10,
 * gpt-4o-mini $0.15 / $0.60 per million input / output tokens), with the built-in definitions' ids.
 */
const PRICES: Record<string, { id: string; input: number; output: number }> = {
  'gpt-4o': { id: 'b9854a5c92dc496b997d99d20', input: 2.5e-6, output: 10e-6 },
  'gpt-4o-mini': { id: 'clyrjp56f0000t0mzapoocd7u', input: 0.15e-6, output: 0.6e-6 },
};

/** The model, usage and cost columns of an observation sent with `s.model` and `s.usage`. */
function costFields(s: SpanSpec): Pick<EventFields, 'model_id' | 'usage_details' | 'cost_details'> {
  const u = s.usage;
  const usage_details: Record<string, number> = u
    ? { input: u.input, output: u.output, total: u.input + u.output }
    : {};
  const price = s.model === undefined ? undefined : PRICES[s.model];
  if (!u || !price) return { model_id: '', usage_details, cost_details: {} };
  const input = u.input * price.input;
  const output = u.output * price.output;
  return { model_id: price.id, usage_details, cost_details: { input, output, total: input + output } };
}

const NO_COST = { model_id: '', usage_details: {}, cost_details: {} };

function traceLevel(trace: TraceAttrs) {
  return {
    trace_name: trace.name,
    user_id: trace.userId,
    session_id: trace.sessionId,
    tags: [...trace.tags].sort(),
    release: trace.release,
    public: trace.public,
    bookmarked: false,
  };
}

function virtualRoot(lt: LegacyTrace, baseUs: number): Omit<EventFields, keyof typeof NO_EXPERIMENT> {
  const batch = isBatch(lt.producer);
  return {
    parent_span_id: '',
    type: 'SPAN',
    name: lt.trace.name,
    ...traceLevel(lt.trace),
    version: lt.trace.version ?? '',
    environment: lt.trace.environment,
    level: 'DEFAULT',
    status_message: '',
    provided_model_name: '',
    ...NO_COST,
    ...(batch ? { metadata: lt.trace.metadata, start_us: baseUs + toMs(lt.startUs) } : {}),
  };
}

/** A legacy observation as an event: propagated in dual (trace metadata merged under its own) or backfilled (its own only). */
function legacyChild(
  lt: LegacyTrace,
  s: SpanSpec,
  propagated: boolean,
  baseUs: number,
): Omit<EventFields, keyof typeof NO_EXPERIMENT> {
  const batch = isBatch(lt.producer);
  return {
    parent_span_id: s.parentId ?? rootId(lt.traceId),
    type: s.type,
    name: s.name,
    ...traceLevel(lt.trace),
    version: s.version ?? lt.trace.version ?? '',
    environment: lt.trace.environment,
    level: s.level,
    status_message: s.statusMessage ?? '',
    provided_model_name: s.model ?? '',
    ...costFields(s),
    // The legacy tables keep milliseconds.
    start_us: baseUs + toMs(s.startUs),
    ...(batch ? { metadata: propagated ? { ...lt.trace.metadata, ...s.metadata } : s.metadata } : {}),
  };
}

/**
 * A span written directly, as sent. Beside the legacy tables (dual) it may keep the legacy tables'
 * milliseconds so that a later backfill of the same span replaces it (start_time is in the sorting
 * key); the spec leaves the precision open there.
 */
function directRows(d: DirectSpan, baseUs: number, besideLegacy: boolean): EventFields[] {
  const row = directRow(d, baseUs);
  return besideLegacy ? [row, { ...row, start_us: baseUs + toMs(d.spec.startUs) }] : [row];
}

/** A span written directly, exactly as sent: trace-level attributes only where the producer put them. */
function directRow(d: DirectSpan, baseUs: number): EventFields {
  const s = d.spec;
  const carries = propagatesClientSide(d.producer) || s.parentId === undefined;
  return {
    parent_span_id: s.parentId ?? '',
    type: s.type,
    name: s.name,
    ...(carries
      ? traceLevel(d.trace)
      : {
          trace_name: '',
          user_id: '',
          session_id: '',
          tags: [],
          release: '',
          public: false,
          bookmarked: false,
        }),
    version: '',
    environment: d.trace.environment,
    level: s.level,
    status_message: s.statusMessage ?? '',
    provided_model_name: s.model ?? '',
    ...costFields(s),
    start_us: baseUs + s.startUs,
    ...NO_EXPERIMENT,
  };
}
