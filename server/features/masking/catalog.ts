/**
 * Each project's masker, cached for a short time so that masking a write costs no PostgreSQL
 * query. A rule changed through this process's API applies at once (the entry is dropped); the
 * other replicas apply it within the TTL, which docs/masking.md states.
 */
import type pg from 'pg';
import type { IngestionWrite, WriteMasking } from '../ingestion/write.ts';
import { maskWrite } from './mask-write.ts';
import { compileMasker, type Masker } from './masker.ts';
import type { MaskingRule } from './rules.ts';
import { enabledMaskingRules } from './store.ts';

export const MASKING_CACHE_TTL_MS = 5_000;

interface Maskers {
  /** Every enabled rule: ingestion. */
  all: Masker | undefined;
  /** The rules that also apply to dataset items. */
  datasetItems: Masker | undefined;
}

const compiled = (rules: MaskingRule[]): Maskers => ({
  all: compileMasker(rules),
  datasetItems: compileMasker(rules.filter((r) => r.datasetItems)),
});

export class MaskingCatalog implements WriteMasking {
  readonly #pool: pg.Pool;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, { loadedAt: number; maskers: Promise<Maskers> }>();

  constructor(pool: pg.Pool, ttlMs = MASKING_CACHE_TTL_MS) {
    this.#pool = pool;
    this.#ttlMs = ttlMs;
  }

  #maskers(projectId: string): Promise<Maskers> {
    const now = Date.now();
    const entry = this.#entries.get(projectId);
    if (entry && now - entry.loadedAt < this.#ttlMs) return entry.maskers;
    const maskers = enabledMaskingRules(this.#pool, projectId).then(compiled);
    // A failed load is not cached, and fails the write: nothing is stored unmasked.
    maskers.catch(() => {
      if (this.#entries.get(projectId)?.maskers === maskers) this.#entries.delete(projectId);
    });
    this.#entries.set(projectId, { loadedAt: now, maskers });
    return maskers;
  }

  async mask(write: IngestionWrite): Promise<IngestionWrite> {
    const { all } = await this.#maskers(write.projectId);
    return all ? maskWrite(all, write) : write;
  }

  /** The masker for the project's dataset items, if any of its rules asks for it. */
  async forDatasetItems(projectId: string): Promise<Masker | undefined> {
    return (await this.#maskers(projectId)).datasetItems;
  }

  invalidate(projectId: string): void {
    this.#entries.delete(projectId);
  }
}
