/**
 * Decodes the body of `POST …/v1/metrics` (and a MetricsService/Export message) into the plain
 * object genai-metrics.ts maps: protobuf or OTLP/JSON, gzip or not, bounded as a trace export is
 * (decode.ts). Throws OtlpDecodeError.
 */
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../write-model/limits.ts';
import {
  DEFAULT_MAX_DECODED_BYTES,
  decompress,
  formatOf,
  jsonObject,
  protobufObject,
  type Signal,
} from './decode.ts';
import { OtlpDecodeError } from './errors.ts';
import { exportMetricsServiceRequestType } from './otlp-proto.ts';

const METRICS: Signal = { type: exportMetricsServiceRequestType, field: 'resourceMetrics', label: 'Metrics' };

export function decodeMetricsExport(
  body: Buffer,
  contentType: string | undefined,
  contentEncoding: string | undefined,
): Record<string, unknown> {
  const format = formatOf(contentType);
  const payload = decompress(body, contentEncoding, DEFAULT_MAX_DECODED_BYTES);
  const raw = format === 'protobuf' ? protobufObject(METRICS, payload) : jsonObject(METRICS, payload);
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH))
    throw new OtlpDecodeError(
      'too-deep',
      `OTel metrics export nested deeper than the limit of ${MAX_JSON_DEPTH} levels (attribute values in arrays and kvlists)`,
    );
  return raw;
}
