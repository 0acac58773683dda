/**
 * Model definitions: what they are, how the public API's requests are validated, and the shape the
 * reference's models API answers with (`Model` of its API definition). Pure: no I/O.
 */
import { z } from 'zod';
import { patternProblem } from './patterns.ts';

export const MODEL_UNITS = ['CHARACTERS', 'TOKENS', 'MILLISECONDS', 'SECONDS', 'IMAGES', 'REQUESTS'] as const;
export type ModelUnit = (typeof MODEL_UNITS)[number];
export const TOKENIZER_IDS = ['openai', 'claude'] as const;
export const TIER_OPERATORS = ['gt', 'gte', 'lt', 'lte', 'eq', 'neq'] as const;
export type TierOperator = (typeof TIER_OPERATORS)[number];

const safePattern = z.string().superRefine((p, ctx) => {
  const problem = patternProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: `pattern ${problem}` });
});

export const usageCondition = z.object({
  usageDetailPattern: safePattern,
  operator: z.enum(TIER_OPERATORS),
  value: z.number(),
  caseSensitive: z.boolean().default(false),
});
export const attributeCondition = z.object({
  source: z.enum(['model_parameters', 'metadata']),
  key: z.string().min(1),
  operator: z.literal('in'),
  values: z.array(z.string()).min(1),
});
export const tierCondition = z.union([usageCondition, attributeCondition]);
export type TierCondition = z.output<typeof tierCondition>;

const prices = z.record(z.string().min(1), z.number().nonnegative());

export const pricingTierInput = z.object({
  name: z.string().min(1),
  isDefault: z.boolean(),
  priority: z.number().int().nonnegative(),
  conditions: z.array(tierCondition),
  prices,
});
export type PricingTierInput = z.output<typeof pricingTierInput>;
export type PricingTier = PricingTierInput & { id: string };

/** The reference's rules for a model's tiers; the message of the first one broken, or null. */
export function tiersProblem(tiers: PricingTierInput[]): string | null {
  const defaults = tiers.filter((t) => t.isDefault);
  if (defaults.length !== 1) return 'exactly one tier must have isDefault=true';
  const d = defaults[0]!;
  if (d.priority !== 0 || d.conditions.length > 0)
    return 'the default tier must have priority 0 and no conditions';
  if (new Set(tiers.map((t) => t.name)).size !== tiers.length) return 'tier names must be unique';
  if (new Set(tiers.map((t) => t.priority)).size !== tiers.length) return 'tier priorities must be unique';
  for (const t of tiers) {
    if (Object.keys(t.prices).length === 0) return `tier '${t.name}' must define at least one price`;
    if (!t.isDefault && t.conditions.length === 0)
      return `tier '${t.name}' is not the default tier and must have at least one condition`;
  }
  return null;
}

/** `POST /api/public/models` (the reference's `CreateModelRequest`). */
export const createModelRequest = z
  .object({
    modelName: z.string().min(1),
    matchPattern: safePattern,
    startDate: z.iso.datetime({ offset: true }).nullish(),
    // Optional, as in the reference's CreateModelRequest: it describes the prices, pricing does not read it.
    unit: z.enum(MODEL_UNITS).nullish(),
    inputPrice: z.number().nonnegative().nullish(),
    outputPrice: z.number().nonnegative().nullish(),
    totalPrice: z.number().nonnegative().nullish(),
    pricingTiers: z.array(pricingTierInput).nullish(),
    tokenizerId: z.enum(TOKENIZER_IDS).nullish(),
    tokenizerConfig: z.unknown().optional(),
  })
  .superRefine((m, ctx) => {
    const flat = m.inputPrice != null || m.outputPrice != null || m.totalPrice != null;
    const tiered = (m.pricingTiers?.length ?? 0) > 0;
    if (flat === tiered) {
      ctx.addIssue({
        code: 'custom',
        path: ['pricingTiers'],
        message: flat
          ? 'provide either flat prices (inputPrice/outputPrice/totalPrice) or pricingTiers, not both'
          : 'provide either flat prices (inputPrice/outputPrice/totalPrice) or pricingTiers',
      });
      return;
    }
    if (flat && (m.inputPrice != null || m.outputPrice != null) && m.totalPrice != null)
      ctx.addIssue({
        code: 'custom',
        path: ['totalPrice'],
        message: 'must be null when inputPrice or outputPrice is set',
      });
    if (tiered) {
      const problem = tiersProblem(m.pricingTiers!);
      if (problem) ctx.addIssue({ code: 'custom', path: ['pricingTiers'], message: problem });
    }
  });
export type CreateModelRequest = z.output<typeof createModelRequest>;

/** The tiers a request defines: its own, or one default tier "Standard" from the flat prices. */
export function requestedTiers(m: CreateModelRequest): PricingTierInput[] {
  if (m.pricingTiers && m.pricingTiers.length > 0) return m.pricingTiers;
  const flat: Record<string, number> = {};
  if (m.inputPrice != null) flat['input'] = m.inputPrice;
  if (m.outputPrice != null) flat['output'] = m.outputPrice;
  if (m.totalPrice != null) flat['total'] = m.totalPrice;
  return [{ name: 'Standard', isDefault: true, priority: 0, conditions: [], prices: flat }];
}

/** A stored model definition; `projectId` null for a built-in one. */
export interface ModelDefinition {
  id: string;
  projectId: string | null;
  modelName: string;
  matchPattern: string;
  /** ISO time from which the definition applies; null: always. */
  startDate: string | null;
  unit: ModelUnit | null;
  tokenizerId: string | null;
  tokenizerConfig: unknown;
  pricingTiers: PricingTier[];
  createdAt: string;
}

/** The prices of a definition's default tier, by usage type (what its flat prices show). */
export const defaultPrices = (m: ModelDefinition): Record<string, number> =>
  m.pricingTiers.find((t) => t.isDefault)?.prices ?? {};

/**
 * A price as a decimal string in positional notation (`0.0000001`, never `1e-7`), as the
 * Observations API v2 serializes a matched model's prices.
 */
export function decimalText(n: number): string {
  const text = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!m) return text;
  const [, sign, lead, fraction = '', exponent] = m;
  const e = Number(exponent);
  const digits = `${lead}${fraction}`;
  return e < 0 ? `${sign}0.${'0'.repeat(-e - 1)}${digits}` : `${sign}${digits.padEnd(e + 1, '0')}`;
}

/** The reference's `Model`: flat prices and `prices` mirror the default tier. */
export function toApiModel(m: ModelDefinition) {
  const flat = defaultPrices(m);
  return {
    id: m.id,
    modelName: m.modelName,
    matchPattern: m.matchPattern,
    startDate: m.startDate,
    unit: m.unit,
    inputPrice: flat['input'] ?? null,
    outputPrice: flat['output'] ?? null,
    totalPrice: flat['total'] ?? null,
    tokenizerId: m.tokenizerId,
    tokenizerConfig: m.tokenizerConfig ?? null,
    isLangfuseManaged: m.projectId === null,
    createdAt: m.createdAt,
    prices: Object.fromEntries(Object.entries(flat).map(([k, price]) => [k, { price }])),
    pricingTiers: [...m.pricingTiers].sort((a, b) => a.priority - b.priority),
  };
}

/**
 * One entry of a price file (server/features/models/prices/*.json, `observatory models load FILE`): a
 * built-in definition with the source of its prices and the date they were read there.
 */
export const priceFileEntry = z.object({
  id: z.string().min(1),
  modelName: z.string().min(1),
  matchPattern: safePattern,
  startDate: z.iso.datetime({ offset: true }).nullable().default(null),
  unit: z.enum(MODEL_UNITS).default('TOKENS'),
  tokenizerId: z.enum(TOKENIZER_IDS).nullable().default(null),
  tokenizerConfig: z.unknown().default(null),
  pricingTiers: z.array(pricingTierInput.extend({ id: z.string().min(1) })).superRefine((tiers, ctx) => {
    const problem = tiersProblem(tiers);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  source: z.string().min(1),
  sourceDate: z.iso.date(),
});
export type PriceFileEntry = z.output<typeof priceFileEntry>;
export const priceFile = z.array(priceFileEntry).superRefine((entries, ctx) => {
  const seen = new Set<string>();
  entries.forEach((e, i) => {
    if (seen.has(e.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate id ${e.id}` });
    seen.add(e.id);
  });
});
