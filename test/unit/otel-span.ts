/**
 * One OTLP/JSON span as a test describes it, run through the real decoder and mapping, so a test
 * sees exactly what ingestion sees.
 */
import { expect } from 'vitest';
import { decodeTraceExport } from '../../server/features/otel/decode.ts';
import { mapExport } from '../../server/features/otel/map-spans.ts';
import type { MapContext, OtelObservation } from '../../server/features/otel/types.ts';

type Js = string | number | boolean | null | Js[] | { [key: string]: Js };

/** OTLP/JSON AnyValue for a plain value (integers as intValue strings, as real exporters send them). */
function anyValue(v: Js): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (v === null) return {};
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return { kvlistValue: { values: keyValues(v) } };
}

function keyValues(obj: Record<string, Js>) {
  return Object.entries(obj).map(([key, value]) => ({ key, value: anyValue(value) }));
}

export interface SpanSpec {
  name?: string;
  attrs?: Record<string, Js>;
  resource?: Record<string, Js>;
  scope?: { name: string; version?: string; attributes?: Record<string, Js> };
  events?: { name: string; attrs?: Record<string, Js> }[];
  status?: { code?: number; message?: string };
  start?: string;
  end?: string;
  parent?: string;
  links?: { traceId: string; spanId: string; attrs?: Record<string, Js> }[];
}

export const TRACE = '5b8efff798038103d269b633813fc60c';
export const SPAN = 'eee19b7ec3c1b174';
export const START = '1700000000123456789'; // 2023-11-14T22:13:20.123456789Z

/** Builds an OTLP/JSON body and runs it through the real decoder, so mapping sees exactly what ingestion sees. */
export function mapOne(spec: SpanSpec, ctx: MapContext = {}): OtelObservation {
  const body = {
    resourceSpans: [
      {
        resource: { attributes: keyValues(spec.resource ?? {}) },
        scopeSpans: [
          {
            scope: {
              name: spec.scope?.name ?? 'some-instrumentation',
              version: spec.scope?.version ?? '1.0.0',
              attributes: keyValues(spec.scope?.attributes ?? {}),
            },
            spans: [
              {
                traceId: TRACE,
                spanId: SPAN,
                parentSpanId: spec.parent ?? '',
                name: spec.name ?? 'span-name',
                kind: 1,
                startTimeUnixNano: spec.start ?? START,
                endTimeUnixNano: spec.end ?? '1700000001000000000',
                attributes: keyValues(spec.attrs ?? {}),
                events: (spec.events ?? []).map((e) => ({
                  timeUnixNano: START,
                  name: e.name,
                  attributes: keyValues(e.attrs ?? {}),
                })),
                status: spec.status ?? {},
                links: (spec.links ?? []).map((l) => ({
                  traceId: l.traceId,
                  spanId: l.spanId,
                  attributes: keyValues(l.attrs ?? {}),
                })),
              },
            ],
          },
        ],
      },
    ],
  };
  const request = decodeTraceExport(Buffer.from(JSON.stringify(body)), 'application/json', undefined);
  const [observation, ...rest] = mapExport(request, ctx);
  expect(rest).toHaveLength(0);
  return observation!;
}
