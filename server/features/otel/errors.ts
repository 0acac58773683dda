/** What part of a request body could not be decoded; lets the HTTP layer pick the response without parsing messages. */
export type OtlpDecodeErrorKind =
  | 'content-type'
  | 'no-content-type'
  | 'content-encoding'
  | 'gzip'
  | 'too-large'
  | 'too-deep'
  | 'protobuf'
  | 'json';

/** The request body is not a decodable OTLP trace export. Always a client error (HTTP 400, or 413 for `too-large`). */
export class OtlpDecodeError extends Error {
  readonly kind: OtlpDecodeErrorKind;

  constructor(kind: OtlpDecodeErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OtlpDecodeError';
    this.kind = kind;
  }
}

/** What was wrong with a decoded export or an ingestion header. */
export type OtlpValidationErrorKind = 'export' | 'ingestion-version';

/** A decoded export (or a request header) that must be refused as a whole. Returned, not thrown. */
export class OtlpValidationError extends Error {
  readonly kind: OtlpValidationErrorKind;
  /** Path of the first offending value, e.g. `resourceSpans[0].scopeSpans[1].spans[3].traceId`; '' for headers. */
  readonly path: string;

  constructor(kind: OtlpValidationErrorKind, message: string, path = '') {
    super(message);
    this.name = 'OtlpValidationError';
    this.kind = kind;
    this.path = path;
  }
}
