/**
 * A gRPC export as the HTTP endpoints' use cases take it: the message's bytes as an
 * `application/x-protobuf` body (grpc-js has already decompressed it) and the producer from the
 * call's metadata, read with the HTTP headers' rules; and the handler of a service that hands it to
 * its use case.
 */

import type { OtlpExport } from '../../../features/ingestion/otlp.ts';
import {
  type HeaderLookup,
  ingestionContextFor,
  type OtlpIngest,
  producerHeaderIn,
  recordRefusedPathFor,
} from '../../../features/ingestion/routes/context.ts';
import { parseIngestionVersionHeader } from '../../../features/otel/validate.ts';
import { HttpError } from '../../../kernel/errors.ts';
import type { WebContext } from '../core/context.ts';
import type { OtlpExportHandler } from './server.ts';

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

/**
 * A collector service's handler that hands the export to its HTTP endpoint's use case, with the
 * same project, attribution and dual-path report: a refusal is the call's error, else the answer
 * says what was rejected.
 */
export const ingestingExportHandler =
  <Rejected>(ingest: OtlpIngest<Rejected>, answer: (rejected: Rejected | null) => Buffer) =>
  (ctx: WebContext): OtlpExportHandler =>
  async ({ body, principal, header }) => {
    const outcome = await ingest(grpcExport(body, header), {
      ...ingestionContextFor(ctx, principal, header),
      onDualPath: () => recordRefusedPathFor(ctx, principal, header, 'otel-dual-path'),
    });
    if (outcome.kind === 'refused') throw new HttpError(outcome.status, outcome.message);
    return answer(outcome.rejected);
  };
