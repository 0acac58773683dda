/**
 * The main thread's side of export-worker.ts: one worker thread, started on first use and again
 * after it died, that decodes, validates and maps OTLP exports (traces and logs) one after
 * another, and builds the `events_full` rows of a direct write.
 */
import { Worker } from 'node:worker_threads';
import type { Attribution, Row } from '../write-model/records.ts';
import type { MappedLogs } from './map-logs.ts';
import type { MapContext, OtelObservation } from './types.ts';

/** What a direct write needs to turn observations into `events_full` rows (see eventsRow). */
export interface RowsContext {
  projectId: string;
  attribution: Attribution;
  besideLegacy: boolean;
}

export interface ExportJob {
  body: Uint8Array;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  ctx: Omit<MapContext, 'now'>;
  nowMs: number;
  /** The forms the caller writes: observations for the legacy tables, rows for `events_full`. */
  want: { spans: boolean; rows: RowsContext | null };
}

/**
 * Mapped spans (`count` of them, in the forms asked for, rows written at `nowMs`); or a client error to answer (status,
 * message); or a bug in the worker (a 500).
 */
export type ExportOutcome =
  | {
      kind: 'mapped';
      count: number;
      spans: OtelObservation[];
      rows: Row[];
      nowMs: number;
      /** Spans refused on their own while others were accepted: OTLP's partial success. */
      rejected: { spans: number; message: string } | null;
    }
  | { kind: 'refused'; status: number; message: string }
  | { kind: 'failed'; message: string };

/** A logs export to decode and map; `rows` asks for the `events_full` rows of its records too. */
export interface LogsJob {
  body: Uint8Array;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  ctx: Omit<MapContext, 'now'>;
  nowMs: number;
  rows: RowsContext | null;
}

/** The mapped records (and their rows when asked), or a client error to answer, or a bug (a 500). */
export type LogsOutcome =
  | { kind: 'mapped'; mapped: MappedLogs; rows: Row[] }
  | { kind: 'refused'; status: number; message: string }
  | { kind: 'failed'; message: string };

/** What the worker is asked: one export of either signal. */
export type WorkerJob = { signal: 'traces'; job: ExportJob } | { signal: 'logs'; job: LogsJob };

type Pending = { resolve: (o: never) => void; reject: (e: Error) => void };

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
  worker = undefined;
}

function started(): Worker {
  if (worker) return worker;
  const w = new Worker(new URL('./export-worker.ts', import.meta.url));
  w.unref(); // an idle worker does not keep the process alive
  w.on('message', ({ id, outcome }: { id: number; outcome: never }) => {
    const p = pending.get(id);
    pending.delete(id);
    p?.resolve(outcome);
  });
  w.on('error', (err) => failAll(err));
  w.on('exit', (code) => failAll(new Error(`OTLP export worker exited with code ${code}`)));
  worker = w;
  return w;
}

/**
 * Ends the worker thread, failing what it still holds. The process's shutdown calls it: an unref'd
 * worker still keeps a message port that holds the event loop open, so the process would not exit.
 */
export async function closeExportPool(): Promise<void> {
  const w = worker;
  if (!w) return;
  worker = undefined;
  await w.terminate();
}

function submit<O>(work: WorkerJob): Promise<O> {
  const id = nextId++;
  return new Promise<O>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (o: never) => void, reject });
    started().postMessage({ id, work });
  });
}

/** Decodes, validates and maps one trace export on the worker thread. */
export function processExport(job: ExportJob): Promise<ExportOutcome> {
  return submit({ signal: 'traces', job });
}

/** Decodes and maps one logs export on the worker thread. */
export function processLogsExport(job: LogsJob): Promise<LogsOutcome> {
  return submit({ signal: 'logs', job });
}
