/**
 * Each project's model definitions for ingestion, cached for a short time so that pricing an
 * event costs no PostgreSQL query. A definition created or deleted through this process's API
 * applies at once (the entry is dropped); other processes see it within the TTL.
 */
import type pg from 'pg';
import { ProjectPricing } from './apply.ts';
import { compileModels } from './pricing.ts';
import { visibleModels } from './store.ts';

export const MODEL_CACHE_TTL_MS = 10_000;

interface Entry {
  loadedAt: number;
  pricing: Promise<ProjectPricing>;
}

export class ModelCatalog {
  readonly #pool: pg.Pool;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, Entry>();

  constructor(pool: pg.Pool, ttlMs = MODEL_CACHE_TTL_MS) {
    this.#pool = pool;
    this.#ttlMs = ttlMs;
  }

  pricingFor(projectId: string): Promise<ProjectPricing> {
    const now = Date.now();
    const entry = this.#entries.get(projectId);
    if (entry && now - entry.loadedAt < this.#ttlMs) return entry.pricing;
    const pricing = visibleModels(this.#pool, projectId).then(
      (defs) => new ProjectPricing(compileModels(defs)),
    );
    // A failed load is not cached: the next event tries again.
    pricing.catch(() => {
      if (this.#entries.get(projectId)?.pricing === pricing) this.#entries.delete(projectId);
    });
    this.#entries.set(projectId, { loadedAt: now, pricing });
    return pricing;
  }

  /** Compiles the built-in definitions before the process serves, not on its first export. */
  async warm(): Promise<void> {
    compileModels(await visibleModels(this.#pool, ''));
  }

  invalidate(projectId: string): void {
    this.#entries.delete(projectId);
  }
}
