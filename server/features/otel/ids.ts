/** Byte lengths of OpenTelemetry ids. */
export const TRACE_ID_BYTES = 16;
export const SPAN_ID_BYTES = 8;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Whether `value` is a lowercase- or uppercase-hex id of `bytes` bytes that is not all zeros (invalid per the OTel spec). */
export function isValidHexId(value: unknown, bytes: number): value is string {
  return (
    typeof value === 'string' &&
    value.length === bytes * 2 &&
    /^[0-9a-fA-F]+$/.test(value) &&
    !/^0+$/.test(value)
  );
}

/** Protobuf ids are raw bytes; protobufjs hands them over as base64, which we re-encode as hex. */
export function base64BytesToHex(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return Buffer.from(value, 'base64').toString('hex');
}

/**
 * OTLP/JSON ids are hex and taken as given. Some producers send the protobuf JSON mapping instead (base64);
 * such a value is converted only when it is unambiguous: not already hex of the right length, made of
 * base64 characters, and decoding to exactly the id's byte length. Anything else is returned unchanged
 * for validation to reject.
 */
export function jsonIdToHex(value: unknown, bytes: number): unknown {
  if (typeof value !== 'string' || value === '') return value;
  if (value.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(value)) return value;
  const isStd = BASE64.test(value);
  if (!isStd && !BASE64URL.test(value)) return value;
  const decoded = Buffer.from(value, isStd ? 'base64' : 'base64url');
  if (decoded.length !== bytes) return value;
  // Buffer.from ignores trailing garbage bits; re-encoding proves the input really was this byte string.
  const canonical = decoded.toString(isStd ? 'base64' : 'base64url');
  if (canonical.replace(/=+$/, '') !== value.replace(/=+$/, '')) return value;
  return decoded.toString('hex');
}
