/**
 * Worker thread that turns an OTLP request body into observations (logs exports too: runLogs): decode, validate, map (a span
 * refused on its own is left out and counted, OTLP's partial success), and for a
 * direct write the `events_full` rows. These steps create objects per attribute; off the main thread they cannot hold the event loop, and what
 * comes back (observations and rows whose metadata is already text) costs the main thread about a copy.
 */
import { parentPort } from 'node:worker_threads';
import { decodeLogsExport, decodeTraceExport } from './decode.ts';
import { OtlpDecodeError } from './errors.ts';
import type { ExportJob, ExportOutcome, LogsJob, LogsOutcome, WorkerJob } from './export-pool.ts';
import { LogsExportError, mapLogsExport } from './map-logs.ts';
import { mapExportPartially } from './map-spans.ts';
import { eventsRow } from './rows.ts';
import { checkTraceExport } from './validate.ts';

function run(job: ExportJob): ExportOutcome {
  try {
    const request = decodeTraceExport(Buffer.from(job.body), job.contentType, job.contentEncoding);
    const check = checkTraceExport(request);
    if (check.error) return { kind: 'refused', status: 400, message: check.error.message };
    const mapped = mapExportPartially(request, { ...job.ctx, now: new Date(job.nowMs) }, check.refusedSpans);
    const spans = mapped.observations;
    const first = check.firstSpanProblem ?? mapped.firstRefusal;
    // Every span refused: nothing was accepted, so not a partial success but a 400 (OTLP's "bad data").
    if (first && spans.length === 0) {
      const message = `Invalid OTLP trace export: ${first.message}. The entire export was rejected; no spans were ingested.`;
      return { kind: 'refused', status: 400, message };
    }
    const rejection = first && {
      spans: mapped.rejected,
      message: `${mapped.rejected} of ${mapped.rejected + spans.length} spans rejected (the others were stored); the first: ${first.message}`,
    };
    const rowsFor = job.want.rows;
    const now = Date.now();
    const rows = rowsFor
      ? spans.map((s) =>
          eventsRow(s, rowsFor.projectId, rowsFor.attribution, now, { besideLegacy: rowsFor.besideLegacy }),
        )
      : [];
    return {
      kind: 'mapped',
      count: spans.length,
      spans: job.want.spans ? spans : [],
      rows,
      nowMs: now,
      rejected: rejection ?? null,
    };
  } catch (err) {
    return failure(err);
  }
}

/** Logs: decode and map (each record with trace context an EVENT of its span), rows when asked. */
function runLogs(job: LogsJob): LogsOutcome {
  try {
    const request = decodeLogsExport(Buffer.from(job.body), job.contentType, job.contentEncoding);
    const mapped = mapLogsExport(request, { ...job.ctx, now: new Date(job.nowMs) });
    const rowsFor = job.rows;
    const rows = rowsFor
      ? mapped.events.map((e) =>
          eventsRow(e, rowsFor.projectId, rowsFor.attribution, job.nowMs, {
            besideLegacy: rowsFor.besideLegacy,
          }),
        )
      : [];
    return { kind: 'mapped', mapped, rows };
  } catch (err) {
    if (err instanceof LogsExportError) return { kind: 'refused', status: 400, message: err.message };
    return failure(err);
  }
}

/** A decoding error is the client's (its status by kind); anything else a bug. */
function failure(
  err: unknown,
): { kind: 'refused'; status: number; message: string } | { kind: 'failed'; message: string } {
  if (err instanceof OtlpDecodeError) {
    const status = err.kind === 'too-large' ? 413 : err.kind === 'content-type' ? 415 : 400;
    return { kind: 'refused', status, message: err.message };
  }
  return { kind: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}

parentPort?.on('message', ({ id, work }: { id: number; work: WorkerJob }) => {
  parentPort?.postMessage({ id, outcome: work.signal === 'logs' ? runLogs(work.job) : run(work.job) });
});
