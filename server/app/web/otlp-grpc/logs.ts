/**
 * LogsService/Export: as TraceService's (traces.ts), through the HTTP logs endpoint's use case
 * (features/ingestion/otlp-logs.ts); the answer is the ExportLogsServiceResponse the HTTP endpoint sends.
 */

import { ingestOtlpLogsBody } from '../../../features/ingestion/otlp-logs.ts';
import { logsPartialSuccess } from '../../../features/ingestion/partial-success.ts';
import { logsExportResponseProto } from '../../../features/otel/otlp-proto.ts';
import { ingestingExportHandler } from './export-of.ts';

export const logsExportHandler = ingestingExportHandler(ingestOtlpLogsBody, (rejected) =>
  logsExportResponseProto(logsPartialSuccess(rejected)),
);
