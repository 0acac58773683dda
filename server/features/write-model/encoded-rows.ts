/**
 * Rows as a write holds them: objects, or the JSON text of their array, encoded where they were
 * built (the OTLP worker thread). The ingestion log stores that text as it is, so the web's main
 * thread neither receives the objects across threads nor encodes them again; a step that needs
 * the objects (masking, writing them) decodes the text.
 */
import type { Row } from './records.ts';

export interface EncodedRows {
  /** `JSON.stringify` of the rows' array. */
  readonly json: string;
  readonly count: number;
}

export type WriteRows = Row[] | EncodedRows;

export const encodedRows = (rows: Row[]): EncodedRows => ({ json: JSON.stringify(rows), count: rows.length });

export const rowCount = (r: WriteRows): number => (Array.isArray(r) ? r.length : r.count);

export const decodedRows = (r: WriteRows): Row[] => (Array.isArray(r) ? r : (JSON.parse(r.json) as Row[]));

export const rowsJson = (r: WriteRows): string => (Array.isArray(r) ? JSON.stringify(r) : r.json);
