/** The trace view's pure parts: the tree in display order, waterfall bars, how a value renders. */

export interface TraceObservation {
  id: string;
  parentObservationId: string | null;
  startTime: string;
  endTime: string | null;
}

/** Depth-first order from the roots (an observation whose parent is absent is a root), children by start time. */
export function treeOrder<T extends TraceObservation>(observations: T[]): { node: T; depth: number }[] {
  const ids = new Set(observations.map((o) => o.id));
  const children = new Map<string | null, T[]>();
  for (const o of observations) {
    const parent =
      o.parentObservationId !== null && ids.has(o.parentObservationId) ? o.parentObservationId : null;
    children.set(parent, [...(children.get(parent) ?? []), o]);
  }
  for (const list of children.values())
    list.sort((a, b) => a.startTime.localeCompare(b.startTime) || a.id.localeCompare(b.id));
  const out: { node: T; depth: number }[] = [];
  const seen = new Set<string>();
  const walk = (parent: string | null, depth: number) => {
    for (const node of children.get(parent) ?? []) {
      if (seen.has(node.id)) continue;
      seen.add(node.id);
      out.push({ node, depth });
      walk(node.id, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

/** Left offset and width of an observation's bar, in percent of the trace's span. */
export function waterfallBar(
  o: TraceObservation,
  traceStart: number,
  traceEnd: number,
): { left: number; width: number } {
  const span = Math.max(1, traceEnd - traceStart);
  const start = Date.parse(o.startTime);
  const end = o.endTime ? Date.parse(o.endTime) : start;
  const left = ((start - traceStart) / span) * 100;
  return { left, width: Math.max(0.5, ((end - start) / span) * 100) };
}

export function traceBounds(observations: TraceObservation[]): { start: number; end: number } {
  const starts = observations.map((o) => Date.parse(o.startTime));
  const ends = observations.map((o) => Date.parse(o.endTime ?? o.startTime));
  return { start: Math.min(...starts), end: Math.max(...ends) };
}

export interface ChatMessage {
  role: string;
  content: string;
}

export type Rendered =
  | { kind: 'empty' }
  | { kind: 'chat'; messages: ChatMessage[] }
  | { kind: 'json'; text: string }
  | { kind: 'text'; text: string };

const isMessage = (m: unknown): m is { role: string; content: unknown } =>
  typeof m === 'object' && m !== null && typeof (m as { role?: unknown }).role === 'string' && 'content' in m;

/** An input or output (raw text as stored): chat messages, pretty JSON, or text. */
export function renderValue(raw: string | null | undefined): Rendered {
  if (raw === null || raw === undefined || raw === '') return { kind: 'empty' };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { kind: 'text', text: raw };
  }
  const list = Array.isArray(value) ? value : (value as { messages?: unknown })?.messages;
  if (Array.isArray(list) && list.length > 0 && list.every(isMessage)) {
    return {
      kind: 'chat',
      messages: list.map((m) => ({
        role: m.role,
        content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content, null, 2),
      })),
    };
  }
  if (typeof value === 'string') return { kind: 'text', text: value };
  return { kind: 'json', text: JSON.stringify(value, null, 2) };
}

/** A span link of an observation: the span of another (or the same) trace it points to. */
export interface SpanLink {
  traceId: string;
  spanId: string;
}

/**
 * The span links an OTLP span carried, from its metadata `links` (JSON `[{traceId, spanId, ...}]`);
 * none when absent or not that shape.
 */
export function spanLinks(metadata: Record<string, unknown> | null | undefined): SpanLink[] {
  const raw = metadata?.['links'];
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(value)) return [];
  return value.flatMap((l) =>
    typeof l === 'object' && l !== null && typeof l.traceId === 'string' && typeof l.spanId === 'string'
      ? [{ traceId: l.traceId, spanId: l.spanId }]
      : [],
  );
}
