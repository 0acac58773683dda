/**
 * The OTLP metrics export use case, shared by `POST /api/public/otel/v1/metrics` and gRPC's
 * MetricsService/Export: decode, keep the GenAI metrics' histogram points (features/otel/genai-metrics.ts)
 * and write them to `genai_metrics` in the caller's project before answering; every other point is
 * accepted and counted (the web's `/metrics`), not stored. Nothing here knows HTTP or gRPC.
 */
import { OtlpDecodeError } from '../otel/errors.ts';
import { mapMetricsExport } from '../otel/genai-metrics.ts';
import { decodeMetricsExport } from '../otel/metrics-decode.ts';
import type { IngestionStore } from '../write-model/store.ts';

/** Counts the points of each export by what became of them (a prom-client counter in the web). */
export type MetricPointTally = (outcome: 'stored' | 'not_stored' | 'rejected', points: number) => void;

export interface OtlpMetricsExport {
  body: Buffer;
  contentType: string | undefined;
  contentEncoding: string | undefined;
}

export interface OtlpMetricsContext {
  projectId: string;
  store: IngestionStore;
  tally: MetricPointTally | undefined;
}

export type OtlpMetricsOutcome =
  | { kind: 'written'; stored: number; rejected: { points: number; message: string } | null }
  | { kind: 'refused'; status: number; message: string };

export const GENAI_METRICS_TABLE = 'genai_metrics';

export async function ingestOtlpMetrics(
  exp: OtlpMetricsExport,
  ctx: OtlpMetricsContext,
): Promise<OtlpMetricsOutcome> {
  let request: Record<string, unknown>;
  try {
    request = decodeMetricsExport(exp.body, exp.contentType, exp.contentEncoding);
  } catch (err) {
    if (!(err instanceof OtlpDecodeError)) throw err;
    const status = err.kind === 'too-large' ? 413 : err.kind === 'content-type' ? 415 : 400;
    return { kind: 'refused', status, message: err.message };
  }
  const mapped = mapMetricsExport(request, ctx.projectId, Date.now());
  if (mapped.kind === 'refused') return { kind: 'refused', status: 400, message: mapped.message };
  if (mapped.rows.length > 0) await ctx.store.insert(GENAI_METRICS_TABLE, mapped.rows);
  ctx.tally?.('stored', mapped.rows.length);
  ctx.tally?.('not_stored', mapped.notStored);
  ctx.tally?.('rejected', mapped.rejected?.points ?? 0);
  return { kind: 'written', stored: mapped.rows.length, rejected: mapped.rejected };
}
