/**
 * Pure cost logic: which definition prices a model name at a time, which of its tiers applies to
 * a usage, and the cost per usage type with its total. No I/O; tested by tables.
 */

import { COMPARE, type Comparison } from '../../kernel/comparisons.ts';
import { COST_LIMIT_USD } from '../write-model/limits.ts';
import type { ModelDefinition, PricingTier, TierCondition, TierOperator } from './definitions.ts';
import { type Pattern, rememberedPattern } from './patterns.ts';

export interface CompiledModel {
  def: ModelDefinition;
  re: Pattern;
  /** Epoch ms of the start date; null: always applies. */
  start: number | null;
}

/** Compiles the definitions' patterns; a stored pattern that no longer compiles matches nothing. */
export function compileModels(defs: ModelDefinition[]): CompiledModel[] {
  const out: CompiledModel[] = [];
  for (const def of defs) {
    let re: Pattern;
    try {
      re = rememberedPattern(def.matchPattern);
    } catch {
      continue;
    }
    out.push({ def, re, start: def.startDate === null ? null : Date.parse(def.startDate) });
  }
  return out;
}

/**
 * The definition for a model name at an observation's time: among the patterns that match and
 * whose start date is not after that time, a project's own before a built-in one, then the newest
 * start date (no start date last), as the reference orders them.
 */
export function matchModel(models: CompiledModel[], modelName: string, at: number): ModelDefinition | null {
  return pickModel(
    models.filter((m) => m.re.test(modelName)),
    at,
  );
}

/** Among definitions whose pattern matched, the one that applies at `at` (see matchModel). */
export function pickModel(matched: CompiledModel[], at: number): ModelDefinition | null {
  let best: CompiledModel | null = null;
  for (const m of matched) {
    if (m.start !== null && m.start > at) continue;
    if (best === null || outranks(m, best)) best = m;
  }
  return best?.def ?? null;
}

function outranks(a: CompiledModel, b: CompiledModel): boolean {
  const aOwn = a.def.projectId !== null;
  const bOwn = b.def.projectId !== null;
  if (aOwn !== bOwn) return aOwn;
  if (a.start !== b.start) return b.start === null || (a.start !== null && a.start > b.start);
  return a.def.id < b.def.id;
}

/** What tier conditions look at besides usage: top-level model parameters and metadata. */
export interface TierAttributes {
  modelParameters: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

const usagePattern = (pattern: string, caseSensitive: boolean): Pattern =>
  rememberedPattern(pattern, !caseSensitive);

/** The tier conditions' operators as symbols; an unknown one compares as `neq` did. */
const SYMBOL_OF: Record<TierOperator, Comparison> = {
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
  eq: '=',
  neq: '!=',
};
const compare = (op: TierOperator, left: number, right: number): boolean =>
  COMPARE[Object.hasOwn(SYMBOL_OF, op) ? SYMBOL_OF[op] : '!='](left, right);

const asText = (v: unknown) =>
  typeof v === 'string' ? v : v === undefined || v === null ? null : JSON.stringify(v);

export function conditionHolds(
  c: TierCondition,
  usage: Record<string, number>,
  attrs: TierAttributes,
): boolean {
  if ('usageDetailPattern' in c) {
    let re: Pattern;
    try {
      re = usagePattern(c.usageDetailPattern, c.caseSensitive);
    } catch {
      return false;
    }
    let sum = 0;
    for (const [k, v] of Object.entries(usage)) if (re.test(k)) sum += v;
    return compare(c.operator, sum, c.value);
  }
  const value = asText((c.source === 'metadata' ? attrs.metadata : attrs.modelParameters)[c.key]);
  return value !== null && c.values.includes(value);
}

/**
 * The tier for a usage: the conditional tiers by ascending priority, the first whose conditions
 * all hold; otherwise the default tier.
 */
export function selectTier(
  tiers: PricingTier[],
  usage: Record<string, number>,
  attrs: TierAttributes,
): PricingTier | null {
  const conditional = tiers.filter((t) => !t.isDefault).sort((a, b) => a.priority - b.priority);
  for (const t of conditional)
    if (t.conditions.length > 0 && t.conditions.every((c) => conditionHolds(c, usage, attrs))) return t;
  return tiers.find((t) => t.isDefault) ?? null;
}

/**
 * The usage to store from the usage sent: the sent one, with `total` as the sum of the sent types
 * when none was sent (as the reference stores it; the sent map itself is kept as provided).
 */
export function usageWithTotal(sent: Record<string, number>): Record<string, number> {
  const types = Object.values(sent);
  if (types.length === 0 || sent['total'] !== undefined) return sent;
  return { ...sent, total: types.reduce((a, b) => a + b, 0) };
}

/** Cost columns hold Decimal(18, 12): rounding here keeps computed and stored values equal. */
const round12 = (x: number) => Math.round(x * 1e12) / 1e12;

/**
 * USD per usage type priced by the tier (usage times price), and `total`: the priced total usage
 * when the tier prices `total`, else the sum of the other costs. Empty when nothing is priced.
 */
export function costOf(
  prices: Record<string, number>,
  usage: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, units] of Object.entries(usage)) {
    const price = prices[k];
    if (price !== undefined) out[k] = round12(units * price);
  }
  if (Object.keys(out).length > 0 && out['total'] === undefined)
    out['total'] = round12(Object.values(out).reduce((a, b) => a + b, 0));
  // A cost the Decimal(18, 12) columns cannot hold stays unknown rather than stored wrong.
  if (Object.values(out).some((c) => c >= COST_LIMIT_USD)) return {};
  return out;
}
