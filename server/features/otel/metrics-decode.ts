/**
 * Decodes the body of `POST …/v1/metrics` (and a MetricsService/Export message) into the plain
 * object genai-metrics.ts maps: protobuf or OTLP/JSON, gzip or not, bounded as a trace export is
 * (decode.ts). Throws OtlpDecodeError.
 */
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../write-model/limits.ts';
import { DEFAULT_MAX_DECODED_BYTES, decompress, formatOf } from './decode.ts';
import { OtlpDecodeError } from './errors.ts';
import { exportMetricsServiceRequestType } from './otlp-proto.ts';

export function decodeMetricsExport(
  body: Buffer,
  contentType: string | undefined,
  contentEncoding: string | undefined,
): Record<string, unknown> {
  const format = formatOf(contentType);
  const payload = decompress(body, contentEncoding, DEFAULT_MAX_DECODED_BYTES);
  const raw = format === 'protobuf' ? decodeProtobuf(payload) : decodeJson(payload);
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH))
    throw new OtlpDecodeError(
      'too-deep',
      `OTel metrics export nested deeper than the limit of ${MAX_JSON_DEPTH} levels (attribute values in arrays and kvlists)`,
    );
  return raw;
}

function decodeProtobuf(payload: Buffer): Record<string, unknown> {
  const type = exportMetricsServiceRequestType();
  try {
    return type.toObject(type.decode(payload), {
      longs: String,
      bytes: String,
      arrays: true,
      defaults: false,
    });
  } catch (err) {
    throw new OtlpDecodeError(
      'protobuf',
      `Failed to parse OTel Protobuf Metrics: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

function decodeJson(payload: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new OtlpDecodeError('json', `Failed to parse OTel JSON Metrics: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new OtlpDecodeError(
      'json',
      'Failed to parse OTel JSON Metrics: expected a JSON object with "resourceMetrics"',
    );
  return parsed as Record<string, unknown>;
}
