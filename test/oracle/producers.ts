/**
 * The requests each producer sends, built from a history's traffic: batch ingestion events as the
 * old SDKs send them, and OTLP/HTTP JSON exports with the headers of each OTLP producer. Pure.
 */
import type { Producer, SpanSpec, Step, TraceAttrs } from './history.ts';
import { propagatesClientSide } from './model.ts';

export interface HttpRequest {
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

type Traffic = Extract<Step, { op: 'send' }>['traffic'];

const iso = (baseUs: number, us: number) => new Date(Math.floor((baseUs + us) / 1000)).toISOString();

function envelope(id: string, type: string, timestamp: string, body: object) {
  return { id, type, timestamp, body };
}

function traceCreate(eventId: string, traceId: string, trace: TraceAttrs, timestamp: string) {
  return envelope(eventId, 'trace-create', timestamp, {
    id: traceId,
    timestamp,
    name: trace.name,
    userId: trace.userId,
    sessionId: trace.sessionId,
    tags: trace.tags,
    release: trace.release,
    ...(trace.version === undefined ? {} : { version: trace.version }),
    environment: trace.environment,
    public: trace.public,
    metadata: trace.metadata,
  });
}

const CREATE_TYPE = { SPAN: 'span-create', GENERATION: 'generation-create', EVENT: 'event-create' } as const;

function observationCreate(traceId: string, s: SpanSpec, environment: string, baseUs: number) {
  const startTime = iso(baseUs, s.startUs);
  return envelope(`${s.id}-create`, CREATE_TYPE[s.type], startTime, {
    id: s.id,
    traceId,
    ...(s.parentId === undefined ? {} : { parentObservationId: s.parentId }),
    name: s.name,
    startTime,
    ...(s.type === 'EVENT' ? {} : { endTime: iso(baseUs, s.startUs + 5_000) }),
    level: s.level,
    ...(s.statusMessage === undefined ? {} : { statusMessage: s.statusMessage }),
    ...(s.version === undefined ? {} : { version: s.version }),
    ...(s.model === undefined ? {} : { model: s.model }),
    ...(s.usage === undefined ? {} : { usage: s.usage }),
    environment,
    metadata: s.metadata,
  });
}

/** The HTTP requests of one traffic item, in order. `n` makes event ids unique within the history. */
export function requestsFor(
  t: Traffic,
  n: number,
  baseUs: number,
  auth: string,
  dataset: { itemId: string },
): HttpRequest[] {
  const json = { authorization: auth, 'content-type': 'application/json' };
  const batch = (events: object[]): HttpRequest => ({
    path: '/api/public/ingestion',
    headers: json,
    body: { batch: events },
  });
  const now = new Date(Math.floor(baseUs / 1000)).toISOString();
  switch (t.kind) {
    case 'trace':
    case 'experiment': {
      if (t.kind === 'trace' && t.producer !== 'batch')
        return [otlpExport(t.producer, t.trace, t.traceId, t.spans, baseUs, auth)];
      const requests = [
        batch([
          traceCreate(`${t.traceId}-create-${n}`, t.traceId, t.trace, iso(baseUs, t.startUs)),
          ...t.spans.map((s) => observationCreate(t.traceId, s, t.trace.environment, baseUs)),
        ]),
      ];
      if (t.kind === 'experiment') {
        requests.push({
          path: '/api/public/dataset-run-items',
          headers: json,
          body: { runName: t.runName, datasetItemId: dataset.itemId, traceId: t.traceId },
        });
      }
      return requests;
    }
    case 'trace-update':
      return [batch([traceCreate(`${t.traceId}-update-${n}`, t.traceId, t.trace, iso(baseUs, t.startUs))])];
    case 'obs-update':
      return [
        batch([
          envelope(
            `${t.spanId}-update-${n}`,
            t.type === 'GENERATION' ? 'generation-update' : 'span-update',
            now,
            {
              id: t.spanId,
              traceId: t.traceId,
              name: t.name,
              level: t.level,
              statusMessage: t.statusMessage,
            },
          ),
        ]),
      ];
    case 'score':
      return [
        batch([
          envelope(`${t.scoreId}-ev`, 'score-create', now, {
            id: t.scoreId,
            traceId: t.traceId,
            name: 'quality',
            value: 1,
            dataType: 'NUMERIC',
          }),
        ]),
      ];
  }
}

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

function otlpExport(
  producer: Producer,
  trace: TraceAttrs,
  traceId: string,
  spans: SpanSpec[],
  baseUs: number,
  auth: string,
): HttpRequest {
  const headers: Record<string, string> = { authorization: auth, 'content-type': 'application/json' };
  if (producer === 'otlp-v4') headers['x-service-ingestion-version'] = '4';
  if (producer === 'sdk-realtime' || producer === 'sdk-delayed') {
    headers['x-langfuse-sdk-name'] = 'python';
    headers['x-langfuse-sdk-version'] = producer === 'sdk-realtime' ? '4.7.0' : '4.6.2';
  }
  const sdk = producer.startsWith('sdk-');
  const nanos = (us: number) => (BigInt(baseUs + us) * 1000n + 123n).toString();
  const otlpSpans = spans.map((s) => {
    // Client-side propagation puts the trace's attributes on every span; others only on the root.
    const traceAttrs =
      propagatesClientSide(producer) || s.parentId === undefined
        ? [
            str('langfuse.trace.name', trace.name),
            str('langfuse.user.id', trace.userId),
            str('langfuse.session.id', trace.sessionId),
            str('langfuse.release', trace.release),
            {
              key: 'langfuse.trace.tags',
              value: { arrayValue: { values: trace.tags.map((v) => ({ stringValue: v })) } },
            },
          ]
        : [];
    return {
      traceId,
      spanId: s.id,
      ...(s.parentId === undefined ? {} : { parentSpanId: s.parentId }),
      name: s.name,
      kind: 1,
      startTimeUnixNano: nanos(s.startUs),
      endTimeUnixNano: nanos(s.startUs + 5_000),
      attributes: [
        str('langfuse.observation.type', s.type.toLowerCase()),
        str('langfuse.observation.level', s.level),
        ...(s.statusMessage === undefined
          ? []
          : [str('langfuse.observation.status_message', s.statusMessage)]),
        ...(s.model === undefined ? [] : [str('langfuse.observation.model.name', s.model)]),
        ...(s.usage === undefined
          ? []
          : [str('langfuse.observation.usage_details', JSON.stringify(s.usage))]),
        ...traceAttrs,
      ],
      status: { code: 0 },
    };
  });
  return {
    path: '/api/public/otel/v1/traces',
    headers,
    body: {
      resourceSpans: [
        {
          resource: { attributes: [str('service.name', 'oracle-app')] },
          scopeSpans: [
            {
              scope: sdk
                ? { name: 'langfuse-sdk', version: producer === 'sdk-realtime' ? '4.7.0' : '4.6.2' }
                : { name: 'oracle-tracer', version: '1.0.0' },
              spans: otlpSpans,
            },
          ],
        },
      ],
    },
  };
}
