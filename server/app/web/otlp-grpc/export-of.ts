/**
 * A gRPC export as the HTTP endpoints' use cases take it: the message's bytes as an
 * `application/x-protobuf` body (grpc-js has already decompressed it) and the producer from the
 * call's metadata, read with the HTTP headers' rules.
 */

import type { OtlpExport } from '../../../features/ingestion/otlp.ts';
import { type HeaderLookup, producerHeaderIn } from '../../../features/ingestion/routes/context.ts';
import { parseIngestionVersionHeader } from '../../../features/otel/validate.ts';
import { HttpError } from '../../../kernel/errors.ts';

export function grpcExport(body: Uint8Array, header: HeaderLookup): OtlpExport {
  const headerName =
    header('x-service-ingestion-version') !== undefined
      ? 'x-service-ingestion-version'
      : 'x-langfuse-ingestion-version';
  const version = parseIngestionVersionHeader(producerHeaderIn(header, 'ingestion-version'), headerName);
  if (version instanceof Error) throw new HttpError(400, version.message);
  return {
    body,
    contentType: 'application/x-protobuf',
    contentEncoding: undefined,
    producer: {
      ingestionVersion: version ?? undefined,
      sdkName: producerHeaderIn(header, 'sdk-name'),
      sdkVersion: producerHeaderIn(header, 'sdk-version'),
    },
  };
}
