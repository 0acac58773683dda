/**
 * An OTLP metrics export (decoded: protobufjs `toObject` output or OTLP/JSON, which share their
 * field names) to the rows of `genai_metrics`: the histogram points of the GenAI metrics
 * (`gen_ai.client.*`, `gen_ai.server.*`, e.g. gen_ai.client.token.usage and
 * gen_ai.client.operation.duration) with the conventions' model, provider, operation and token
 * type. Every other point is counted, not stored. A point refused on its own (its time, its bucket
 * counts, a limit) is left out and counted as OTLP's partial success. Pure.
 */
import { createHash } from 'node:crypto';
import { timestampInRange } from '../../kernel/iso-datetime.ts';
import {
  MAX_ATTRIBUTES_PER_SPAN,
  MAX_DATA_POINTS_PER_EXPORT,
  MAX_HISTOGRAM_BOUNDS,
} from '../write-model/limits.ts';
import { chTime } from '../write-model/time.ts';
import { type Attributes, asText, attr, isMeaningful, toAttributes } from './attributes.ts';

/** The metric names stored: the GenAI semantic conventions' client and server metrics. */
export const isGenAiMetric = (name: string) =>
  name.startsWith('gen_ai.client.') || name.startsWith('gen_ai.server.');

export type GenAiMetricRow = {
  project_id: string;
  metric_name: string;
  unit: string;
  /** The series (metric, resource service and point attributes): a cumulative point replaces its series' earlier ones. */
  series_id: string;
  start_time: string;
  timestamp: string;
  temporality: 'delta' | 'cumulative' | 'unspecified';
  service_name: string;
  /** The resource's deployment.environment.name (or the older deployment.environment); else `default`. */
  environment: string;
  operation: string;
  provider: string;
  request_model: string;
  response_model: string;
  /** The response model when sent, else the requested one. */
  model: string;
  token_type: string;
  server_address: string;
  error_type: string;
  count: number;
  sum: number;
  min: number | null;
  max: number | null;
  bucket_counts: number[];
  explicit_bounds: number[];
  attributes: Record<string, string>;
  event_ts: string;
};

export type MetricsOutcome =
  | {
      kind: 'mapped';
      rows: GenAiMetricRow[];
      /** Points of metrics that are not stored (other names, or GenAI metrics in another shape). */
      notStored: number;
      rejected: { points: number; message: string } | null;
    }
  | { kind: 'refused'; message: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

const SHAPES = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] as const;
const TEMPORALITY = { 1: 'delta', 2: 'cumulative' } as Record<number | string, 'delta' | 'cumulative'>;

/** A point refused on its own: why. */
class PointProblem extends Error {}

function nanosToMs(value: unknown, what: string): number | null {
  if (value === undefined || value === null || value === '' || value === '0' || value === 0) return null;
  const text = String(value);
  if (!/^\d+$/.test(text))
    throw new PointProblem(`${what} is not a timestamp: ${JSON.stringify(text.slice(0, 40))}`);
  const ms = Number(BigInt(text) / 1_000_000n);
  if (!timestampInRange(ms)) throw new PointProblem(`${what} is outside the accepted time range: ${text}`);
  return ms;
}

function unsigned(value: unknown, what: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new PointProblem(`${what} is not an unsigned count: ${String(value)}`);
  return n;
}

const finiteOrNull = (value: unknown): number | null => {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

const text = (attrs: Attributes, ...keys: string[]) => {
  for (const k of keys) {
    const v = attr(attrs, k);
    if (isMeaningful(v)) return asText(v);
  }
  return '';
};

function seriesId(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

function histogramRow(
  point: Obj,
  ctx: {
    projectId: string;
    name: string;
    unit: string;
    temporality: GenAiMetricRow['temporality'];
    resource: Attributes;
    eventTs: string;
  },
): GenAiMetricRow {
  const rawAttributes = point['attributes'];
  if (Array.isArray(rawAttributes) && rawAttributes.length > MAX_ATTRIBUTES_PER_SPAN)
    throw new PointProblem(`has more than the limit of ${MAX_ATTRIBUTES_PER_SPAN} attributes`);
  const attrs = toAttributes(rawAttributes);
  const timeMs = nanosToMs(point['timeUnixNano'], 'timeUnixNano');
  if (timeMs === null) throw new PointProblem('timeUnixNano is missing');
  const startMs = nanosToMs(point['startTimeUnixNano'], 'startTimeUnixNano') ?? timeMs;
  const bounds = Array.isArray(point['explicitBounds']) ? point['explicitBounds'].map(Number) : [];
  if (bounds.length > MAX_HISTOGRAM_BOUNDS)
    throw new PointProblem(`has more than the limit of ${MAX_HISTOGRAM_BOUNDS} explicit bounds`);
  if (!bounds.every(Number.isFinite))
    throw new PointProblem('explicitBounds holds a value that is not a finite number');
  const buckets = (Array.isArray(point['bucketCounts']) ? point['bucketCounts'] : []).map((c, i) =>
    unsigned(c, `bucketCounts[${i}]`),
  );
  if (buckets.length !== 0 && buckets.length !== bounds.length + 1)
    throw new PointProblem(
      `has ${buckets.length} bucket counts for ${bounds.length} explicit bounds (expected ${bounds.length + 1})`,
    );
  const requestModel = text(attrs, 'gen_ai.request.model');
  const responseModel = text(attrs, 'gen_ai.response.model');
  const serviceName = text(ctx.resource, 'service.name');
  const stringAttributes = Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, asText(v)]));
  return {
    project_id: ctx.projectId,
    metric_name: ctx.name,
    unit: ctx.unit,
    series_id: seriesId([ctx.name, ctx.unit, serviceName, Object.entries(stringAttributes).sort()]),
    start_time: chTime(startMs),
    timestamp: chTime(timeMs),
    temporality: ctx.temporality,
    service_name: serviceName,
    environment: text(ctx.resource, 'deployment.environment.name', 'deployment.environment') || 'default',
    operation: text(attrs, 'gen_ai.operation.name'),
    // gen_ai.system is the name the conventions used before gen_ai.provider.name.
    provider: text(attrs, 'gen_ai.provider.name', 'gen_ai.system'),
    request_model: requestModel,
    response_model: responseModel,
    model: responseModel || requestModel,
    token_type: text(attrs, 'gen_ai.token.type'),
    server_address: text(attrs, 'server.address'),
    error_type: text(attrs, 'error.type'),
    count: unsigned(point['count'], 'count'),
    sum: finiteOrNull(point['sum']) ?? 0,
    min: finiteOrNull(point['min']),
    max: finiteOrNull(point['max']),
    bucket_counts: buckets,
    explicit_bounds: bounds,
    attributes: stringAttributes,
    event_ts: ctx.eventTs,
  };
}

export function mapMetricsExport(request: Obj, projectId: string, nowMs: number): MetricsOutcome {
  const rows: GenAiMetricRow[] = [];
  let notStored = 0;
  let points = 0;
  let rejected = 0;
  let firstProblem = '';
  const eventTs = chTime(nowMs);
  for (const [r, rm] of list(request['resourceMetrics']).entries()) {
    const resource = toAttributes(isObj(rm['resource']) ? rm['resource']['attributes'] : undefined);
    for (const [s, sm] of list(rm['scopeMetrics']).entries()) {
      for (const [m, metric] of list(sm['metrics']).entries()) {
        const name = typeof metric['name'] === 'string' ? metric['name'] : '';
        const shape = SHAPES.find((k) => isObj(metric[k]));
        const data = shape ? (metric[shape] as Obj) : {};
        const dataPoints = list(data['dataPoints']);
        points += dataPoints.length;
        if (points > MAX_DATA_POINTS_PER_EXPORT)
          return {
            kind: 'refused',
            message: `Invalid OTLP metrics export: more than the limit of ${MAX_DATA_POINTS_PER_EXPORT} data points per export. The entire export was rejected; no data points were ingested.`,
          };
        if (shape !== 'histogram' || !isGenAiMetric(name)) {
          notStored += dataPoints.length;
          continue;
        }
        const temporality = TEMPORALITY[String(data['aggregationTemporality'])] ?? 'unspecified';
        const unit = typeof metric['unit'] === 'string' ? metric['unit'] : '';
        for (const [p, point] of dataPoints.entries()) {
          try {
            rows.push(histogramRow(point, { projectId, name, unit, temporality, resource, eventTs }));
          } catch (err) {
            if (!(err instanceof PointProblem)) throw err;
            rejected++;
            firstProblem ||= `resourceMetrics[${r}].scopeMetrics[${s}].metrics[${m}] (${name}) dataPoints[${p}] ${err.message}`;
          }
        }
      }
    }
  }
  return {
    kind: 'mapped',
    rows,
    notStored,
    rejected:
      rejected > 0
        ? { points: rejected, message: `${rejected} data point(s) refused; the first: ${firstProblem}` }
        : null,
  };
}
