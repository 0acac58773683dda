import { gunzipSync } from 'node:zlib';
import type protobuf from 'protobufjs';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../write-model/limits.ts';
import { OtlpDecodeError } from './errors.ts';
import { base64BytesToHex, jsonIdToHex } from './ids.ts';
import { type IdConverter, normalizeExport, normalizeLogsExport } from './normalize.ts';
import { exportLogsServiceRequestType, exportTraceServiceRequestType } from './otlp-proto.ts';
import type { ExportLogsServiceRequest, ExportTraceServiceRequest } from './otlp-types.ts';

/** Default cap on the (decompressed) body: generous for OTLP batches, small enough to refuse zip bombs. */
export const DEFAULT_MAX_DECODED_BYTES = 32 * 1024 * 1024;

export interface DecodeOptions {
  /** Largest body accepted, measured after decompression; larger ones fail with kind `too-large`. */
  maxBytes?: number;
}

type Format = 'protobuf' | 'json';

/** An export's body with the headers that say how to read it, and the bounds to decode it within. */
type ExportBody = [
  body: Buffer,
  contentType: string | undefined,
  contentEncoding: string | undefined,
  options?: DecodeOptions,
];

/**
 * Decodes the body of `POST …/v1/traces` into an ExportTraceServiceRequest (see otlp-types.ts).
 * Throws OtlpDecodeError. The result is structurally normalized but not validated: run
 * `validateTraceExport` on it before use, as a JSON body can hold anything.
 */
export function decodeTraceExport(...body: ExportBody): ExportTraceServiceRequest {
  const { raw, toHex } = decodeBody(TRACES, ...body);
  return normalizeExport(raw, toHex);
}

/** As decodeTraceExport, for the body of `POST …/v1/logs` (validated while it is mapped, map-logs.ts). */
export function decodeLogsExport(...body: ExportBody): ExportLogsServiceRequest {
  const { raw, toHex } = decodeBody(LOGS, ...body);
  return normalizeLogsExport(raw, toHex);
}

/** What differs between the signals: the message type, the JSON's top-level field, the words of errors. */
export interface Signal {
  type: () => protobuf.Type;
  field: string;
  label: string;
}
const TRACES: Signal = { type: exportTraceServiceRequestType, field: 'resourceSpans', label: 'Trace' };
const LOGS: Signal = { type: exportLogsServiceRequestType, field: 'resourceLogs', label: 'Logs' };

/** A decoded body before normalization, with how its format spells ids. */
interface RawExport {
  raw: Record<string, unknown>;
  toHex: IdConverter;
}

function decodeBody(
  signal: Signal,
  ...[body, contentType, contentEncoding, options = {}]: ExportBody
): RawExport {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DECODED_BYTES;
  const format = formatOf(contentType);
  const payload = decompress(body, contentEncoding, maxBytes);
  return format === 'protobuf' ? decodeProtobuf(signal, payload) : decodeJson(signal, payload);
}

/** The reference server accepts any content type that contains one of the two media types (charset etc. allowed). */
export function formatOf(contentType: string | undefined): Format {
  // The reference answers 400 when the header is missing, 415 for a type it does not decode.
  if (!contentType)
    throw new OtlpDecodeError(
      'no-content-type',
      'Content-Type is required: application/x-protobuf or application/json',
    );
  const ct = contentType.toLowerCase();
  if (ct.includes('application/x-protobuf')) return 'protobuf';
  if (ct.includes('application/json')) return 'json';
  throw new OtlpDecodeError(
    'content-type',
    `Invalid content type: expected application/x-protobuf or application/json, got "${contentType}"`,
  );
}

/** gzip magic number; neither a protobuf message (wire type 7 is invalid) nor JSON can start with it. */
function looksGzipped(body: Buffer): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b;
}

/** The body, gunzipped as its encoding (or its magic bytes) says, never past `maxBytes`. */
export function decompress(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Buffer {
  const encodings = (contentEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && e !== 'identity');
  const unsupported = encodings.find((e) => e !== 'gzip' && e !== 'x-gzip');
  if (unsupported !== undefined) {
    throw new OtlpDecodeError(
      'content-encoding',
      `Unsupported content encoding "${unsupported}": expected gzip or identity`,
    );
  }
  // Some clients compress without saying so; the magic bytes make that unambiguous.
  const gzipped = encodings.length > 0 || looksGzipped(body);
  if (!gzipped) {
    if (body.length > maxBytes) throw tooLarge(maxBytes);
    return body;
  }
  let out = body;
  for (let i = 0; i < Math.max(encodings.length, 1); i++) out = gunzip(out, maxBytes);
  return out;
}

function gunzip(body: Buffer, maxBytes: number): Buffer {
  try {
    // maxOutputLength makes zlib stop as soon as the output would exceed the cap: a bomb never inflates.
    return gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes);
    throw new OtlpDecodeError('gzip', `Invalid gzip body: ${(err as Error).message}`, { cause: err });
  }
}

function tooLarge(maxBytes: number): OtlpDecodeError {
  return new OtlpDecodeError(
    'too-large',
    `Request body exceeds the limit of ${maxBytes} bytes after decompression`,
  );
}

/** A protobuf export message as a plain object (64-bit integers as strings, bytes as base64). */
export function protobufObject(signal: Signal, payload: Buffer): Record<string, unknown> {
  const type = signal.type();
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
      `Failed to parse OTel Protobuf ${signal.label}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** An OTLP/JSON export: one JSON object (a byte-order mark tolerated). */
export function jsonObject(signal: Signal, payload: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new OtlpDecodeError(
      'json',
      `Failed to parse OTel JSON ${signal.label}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new OtlpDecodeError(
      'json',
      `Failed to parse OTel JSON ${signal.label}: expected a JSON object with "${signal.field}"`,
    );
  }
  return parsed as Record<string, unknown>;
}

const decodeProtobuf = (signal: Signal, payload: Buffer): RawExport => ({
  raw: bounded(protobufObject(signal, payload)),
  toHex: base64BytesToHex,
});

const decodeJson = (signal: Signal, payload: Buffer): RawExport => ({
  raw: bounded(jsonObject(signal, payload)),
  toHex: jsonIdToHex,
});

/** Refuses an export nested deeper than MAX_JSON_DEPTH before anything walks it recursively. */
function bounded(raw: Record<string, unknown>): Record<string, unknown> {
  if (!jsonDepthExceeds(raw, MAX_JSON_DEPTH)) return raw;
  throw new OtlpDecodeError(
    'too-deep',
    `OTel export nested deeper than the limit of ${MAX_JSON_DEPTH} levels (attribute values in arrays and kvlists)`,
  );
}
