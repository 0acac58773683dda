/**
 * The models page's form as text and back: the default tier's prices one `usage type = USD per
 * unit` a line, the other tiers as JSON (conditions are few and varied), a start date as ISO or
 * empty. Pure; tested by tables.
 */
import type { ModelDefinition, ModelRequest, PricingTier } from './api.ts';

export interface ModelForm {
  modelName: string;
  matchPattern: string;
  startDate: string;
  unit: string;
  tokenizerId: string;
  prices: string;
  otherTiers: string;
}

export const EMPTY_FORM: ModelForm = {
  modelName: '',
  matchPattern: '',
  startDate: '',
  unit: 'TOKENS',
  tokenizerId: '',
  prices: 'input = 0\noutput = 0',
  otherTiers: '',
};

export const pricesText = (prices: Record<string, number>): string =>
  Object.entries(prices)
    .map(([k, v]) => `${k} = ${v}`)
    .join('\n');

/** `input = 0.000001` lines -> prices; throws naming the line that is not one. */
export function parsePrices(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const m = line.match(/^([^=\s]+)\s*=\s*(\S+)$/);
    const price = m ? Number(m[2]) : Number.NaN;
    if (!m || !Number.isFinite(price) || price < 0)
      throw new Error(`prices, line ${i + 1}: expected "usage type = price", got "${line}"`);
    out[m[1]!] = price;
  }
  return out;
}

/** The form showing a stored definition (ids of tiers left out: a save gives new ones). */
export function formOf(m: ModelDefinition): ModelForm {
  const def = m.pricingTiers.find((t) => t.isDefault);
  const others = m.pricingTiers.filter((t) => !t.isDefault).map(({ id: _id, ...t }) => t);
  return {
    modelName: m.modelName,
    matchPattern: m.matchPattern,
    startDate: m.startDate ?? '',
    unit: m.unit ?? 'TOKENS',
    tokenizerId: m.tokenizerId ?? '',
    prices: pricesText(def?.prices ?? {}),
    otherTiers: others.length > 0 ? JSON.stringify(others, null, 2) : '',
  };
}

/** The request a form sends; throws saying which field is wrong. */
export function requestOf(f: ModelForm, tokenizerConfig: unknown): ModelRequest {
  let others: PricingTier[] = [];
  if (f.otherTiers.trim() !== '') {
    try {
      others = JSON.parse(f.otherTiers) as PricingTier[];
    } catch {
      throw new Error('other tiers: not valid JSON');
    }
    if (!Array.isArray(others)) throw new Error('other tiers: expected a JSON array of tiers');
  }
  return {
    modelName: f.modelName.trim(),
    matchPattern: f.matchPattern,
    startDate: f.startDate.trim() === '' ? null : f.startDate.trim(),
    unit: f.unit,
    tokenizerId: f.tokenizerId === '' ? null : f.tokenizerId,
    ...(f.tokenizerId === '' ? {} : { tokenizerConfig }),
    pricingTiers: [
      { name: 'Standard', isDefault: true, priority: 0, conditions: [], prices: parsePrices(f.prices) },
      ...others,
    ],
  };
}
