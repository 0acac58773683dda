/**
 * Price files: built-in model definitions as data, each entry with the source of its prices and
 * the date they were read there. The repository's own file (prices/built-in.json) is loaded when
 * the web starts; `observatory models load FILE` loads a newer one without a release.
 */
import { readFileSync } from 'node:fs';
import { describeIssues } from '../write-model/bodies.ts';
import { type PriceFileEntry, priceFile } from './definitions.ts';

export const BUILT_IN_PRICE_FILE = new URL('./prices/built-in.json', import.meta.url);

export class PriceFileError extends Error {
  override name = 'PriceFileError';
}

/** Parses and validates a price file's text; the error names the entries and fields at fault. */
export function parsePriceFile(text: string, name: string): PriceFileEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new PriceFileError(`${name}: not JSON (${(err as Error).message})`);
  }
  const parsed = priceFile.safeParse(json);
  if (!parsed.success) throw new PriceFileError(`${name}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

export function readPriceFile(path: string | URL): PriceFileEntry[] {
  return parsePriceFile(readFileSync(path, 'utf8'), String(path));
}
