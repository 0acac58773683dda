/**
 * Cost on the rows ingestion writes: a legacy `observations` row (batch, legacy writes, and OTLP
 * through the legacy tables; staging copies it) and a direct `events_full` row. A cost the SDK
 * sent always wins; otherwise the matched definition's tier prices the usage the SDK sent, or the
 * usage inferred by the definition's tokenizer. Pure: the definitions come in as a ProjectPricing.
 */
import { fromChTime } from '../write-model/time.ts';
import type { ModelDefinition, PricingTier } from './definitions.ts';
import {
  type CompiledModel,
  costOf,
  pickModel,
  selectTier,
  type TierAttributes,
  usageWithTotal,
} from './pricing.ts';
import { inferUsage } from './tokenize.ts';

type Row = Record<string, unknown>;

/** One project's definitions (its own and the built-in ones), with the patterns each name matched. */
export class ProjectPricing {
  readonly #models: CompiledModel[];
  readonly #byName = new Map<string, CompiledModel[]>();
  constructor(models: CompiledModel[]) {
    this.#models = models;
  }

  modelFor(name: string, at: number): ModelDefinition | null {
    let candidates = this.#byName.get(name);
    if (!candidates) {
      candidates = this.#models.filter((m) => m.re.test(name));
      // Names are few per project; the bound keeps a flood of distinct names from growing it.
      if (this.#byName.size < 10_000) this.#byName.set(name, candidates);
    }
    return candidates.length === 0 ? null : pickModel(candidates, at);
  }
}

export interface Generation {
  modelName: string;
  at: number;
  providedCost: Record<string, number>;
  providedUsage: Record<string, number>;
  input: string | null;
  output: string | null;
  attributes: TierAttributes;
}

export interface Priced {
  modelId: string;
  /** The usage to store: the one sent, or the inferred one; empty when unknown. */
  usage: Record<string, number>;
  /** Computed cost; null when the SDK sent one (it stays) or nothing could be priced. */
  cost: Record<string, number> | null;
  tier: PricingTier | null;
}

const isEmpty = (o: Record<string, unknown>) => Object.keys(o).length === 0;

export function priceGeneration(p: ProjectPricing, g: Generation): Priced | null {
  const model = p.modelFor(g.modelName, g.at);
  if (!model) return null;
  const usage = isEmpty(g.providedUsage)
    ? (inferUsage(model.tokenizerId, model.tokenizerConfig, g.input, g.output) ?? {})
    : usageWithTotal(g.providedUsage);
  if (!isEmpty(g.providedCost) || isEmpty(usage)) return { modelId: model.id, usage, cost: null, tier: null };
  const tier = selectTier(model.pricingTiers, usage, g.attributes);
  const cost = tier ? costOf(tier.prices, usage) : {};
  return { modelId: model.id, usage, cost: isEmpty(cost) ? null : cost, tier: isEmpty(cost) ? null : tier };
}

const objectOf = (text: unknown): Record<string, unknown> => {
  if (typeof text !== 'string' || text === '') return {};
  try {
    const v = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
};
const textOrNull = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
/** A stored map read back from the analytics store may carry its numbers as text (64-bit values). */
const numbers = (v: unknown): Record<string, number> =>
  Object.fromEntries(Object.entries((v ?? {}) as Record<string, unknown>).map(([k, n]) => [k, Number(n)]));

/**
 * Prices a merged legacy observation row in place. The computed columns are derived afresh from
 * what was sent (`provided_*`), so a later update of the usage or the model reprices the row.
 */
export function priceLegacyRow(p: ProjectPricing, row: Row): void {
  const providedCost = numbers(row['provided_cost_details']);
  const providedUsage = numbers(row['provided_usage_details']);
  const modelName = textOrNull(row['provided_model_name']);
  if (isEmpty(providedCost)) {
    row['cost_details'] = {};
    row['total_cost'] = null;
  }
  row['internal_model_id'] = null;
  row['usage_details'] = usageWithTotal(providedUsage);
  row['usage_pricing_tier_id'] = null;
  row['usage_pricing_tier_name'] = null;
  if (!modelName) return;
  const priced = priceGeneration(p, {
    modelName,
    at: fromChTime(String(row['start_time'])),
    providedCost,
    providedUsage,
    input: textOrNull(row['input']),
    output: textOrNull(row['output']),
    attributes: {
      modelParameters: objectOf(row['model_parameters']),
      metadata: (row['metadata'] ?? {}) as Record<string, unknown>,
    },
  });
  if (!priced) return;
  row['internal_model_id'] = priced.modelId;
  row['usage_details'] = priced.usage;
  if (priced.cost) {
    row['cost_details'] = priced.cost;
    row['total_cost'] = priced.cost['total'] ?? null;
    row['usage_pricing_tier_id'] = priced.tier?.id ?? null;
    row['usage_pricing_tier_name'] = priced.tier?.name ?? null;
  }
}

/**
 * Prices a direct `events_full` row in place. Its `total_cost` is `cost_details['total']`, so a
 * cost sent without a total gets the sum of its parts as total, as the legacy rows do.
 */
export function priceEventRow(p: ProjectPricing, row: Row): void {
  const sent = numbers(row['provided_cost_details']);
  if (!isEmpty(sent) && sent['total'] === undefined)
    row['cost_details'] = { ...sent, total: Object.values(sent).reduce((a, b) => a + b, 0) };
  const modelName = textOrNull(row['provided_model_name']);
  if (!modelName) return;
  const names = (row['metadata_names'] ?? []) as string[];
  const values = (row['metadata_values'] ?? []) as string[];
  const priced = priceGeneration(p, {
    modelName,
    at: fromChTime(String(row['start_time'])),
    providedCost: numbers(row['provided_cost_details']),
    providedUsage: numbers(row['provided_usage_details']),
    input: textOrNull(row['input']),
    output: textOrNull(row['output']),
    attributes: {
      modelParameters: objectOf(row['model_parameters']),
      metadata: Object.fromEntries(names.map((n, i) => [n, values[i]])),
    },
  });
  if (!priced) return;
  row['model_id'] = priced.modelId;
  row['usage_details'] = priced.usage;
  if (priced.cost) {
    row['cost_details'] = priced.cost;
    row['usage_pricing_tier_id'] = priced.tier?.id ?? null;
    row['usage_pricing_tier_name'] = priced.tier?.name ?? null;
  }
}
