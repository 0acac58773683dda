/**
 * TraceService/Export: the export goes through the HTTP endpoint's use case (features/ingestion/otlp.ts) as
 * an `application/x-protobuf` body, so limits, write modes, pricing and partial success are one
 * implementation; the answer is the ExportTraceServiceResponse the HTTP endpoint sends.
 */

import { ingestOtlpExport } from '../../../features/ingestion/otlp.ts';
import { spansPartialSuccess } from '../../../features/ingestion/partial-success.ts';
import { exportResponseProto } from '../../../features/otel/otlp-proto.ts';
import { ingestingExportHandler } from './export-of.ts';

export const traceExportHandler = ingestingExportHandler(ingestOtlpExport, (rejected) =>
  exportResponseProto(spansPartialSuccess(rejected)),
);
