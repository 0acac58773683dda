import { describe, expect, it } from 'vitest';
import type { ModelDefinition } from '../../server/app/ui/src/features/models/api.ts';
import {
  EMPTY_FORM,
  formOf,
  parsePrices,
  requestOf,
} from '../../server/app/ui/src/features/models/model-form.ts';

describe('the models page form', () => {
  it.each([
    ['input = 0.001\noutput = 0.002', { input: 0.001, output: 0.002 }],
    ['  input=1e-6 \n\n cached_input = 0 ', { input: 1e-6, cached_input: 0 }],
    ['', {}],
  ])('reads prices %j', (text, prices) => {
    expect(parsePrices(text)).toEqual(prices);
  });

  it.each([
    ['input 0.001', 'prices, line 1: expected "usage type = price", got "input 0.001"'],
    ['input = 1\noutput = -1', 'prices, line 2: expected "usage type = price", got "output = -1"'],
    ['input = free', 'prices, line 1: expected "usage type = price", got "input = free"'],
  ])('refuses prices %j naming the line', (text, message) => {
    expect(() => parsePrices(text)).toThrow(message);
  });

  const stored: ModelDefinition = {
    id: 'm1',
    modelName: 'gpt-4o',
    matchPattern: '(?i)^gpt-4o$',
    startDate: null,
    unit: 'TOKENS',
    tokenizerId: 'openai',
    tokenizerConfig: { tokenizerModel: 'gpt-4o' },
    isLangfuseManaged: true,
    pricingTiers: [
      {
        id: 't0',
        name: 'Standard',
        isDefault: true,
        priority: 0,
        conditions: [],
        prices: { input: 1, output: 2 },
      },
      {
        id: 't1',
        name: 'Long',
        isDefault: false,
        priority: 1,
        conditions: [{ usageDetailPattern: 'input', operator: 'gt', value: 100, caseSensitive: false }],
        prices: { input: 3 },
      },
    ],
  };

  it('shows a stored definition and sends it back with its tiers (ids left to the server)', () => {
    const form = formOf(stored);
    expect(form.prices).toBe('input = 1\noutput = 2');
    expect(requestOf(form, stored.tokenizerConfig)).toEqual({
      modelName: 'gpt-4o',
      matchPattern: '(?i)^gpt-4o$',
      startDate: null,
      unit: 'TOKENS',
      tokenizerId: 'openai',
      tokenizerConfig: { tokenizerModel: 'gpt-4o' },
      pricingTiers: [
        { name: 'Standard', isDefault: true, priority: 0, conditions: [], prices: { input: 1, output: 2 } },
        {
          name: 'Long',
          isDefault: false,
          priority: 1,
          conditions: [{ usageDetailPattern: 'input', operator: 'gt', value: 100, caseSensitive: false }],
          prices: { input: 3 },
        },
      ],
    });
  });

  it.each([
    ['{', 'other tiers: not valid JSON'],
    ['{"name": "x"}', 'other tiers: expected a JSON array of tiers'],
  ])('refuses other tiers %j', (otherTiers, message) => {
    expect(() => requestOf({ ...EMPTY_FORM, otherTiers }, undefined)).toThrow(message);
  });
});
