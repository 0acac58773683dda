/**
 * Model definitions and cost, pure logic by tables: pattern safety, which definition prices a
 * model name at a time, tier boundaries, cost per usage type, usage inferred by OpenAI's BPE, and
 * the cost columns of the rows ingestion writes. Expected prices and token counts are the
 * providers' published figures, not values read back from this code.
 */
import { countTokens as anthropicCountTokens } from '@anthropic-ai/tokenizer';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ProjectPricing,
  priceEventRow,
  priceGeneration,
  priceLegacyRow,
} from '../../server/features/models/apply.ts';
import {
  createModelRequest,
  decimalText,
  type ModelDefinition,
  type PricingTier,
} from '../../server/features/models/definitions.ts';
import { compilePattern, patternProblem, rememberedPattern } from '../../server/features/models/patterns.ts';
import {
  BUILT_IN_PRICE_FILE,
  parsePriceFile,
  readPriceFile,
} from '../../server/features/models/price-file.ts';
import {
  compileModels,
  costOf,
  matchModel,
  selectTier,
  usageWithTotal,
} from '../../server/features/models/pricing.ts';
import { inferUsage, warmTokenizers } from '../../server/features/models/tokenize.ts';
import { chTime } from '../../server/features/write-model/time.ts';

const BUILT_IN = readPriceFile(BUILT_IN_PRICE_FILE);
const builtInDefs: ModelDefinition[] = BUILT_IN.map((e) => ({
  ...e,
  projectId: null,
  createdAt: '2026-01-01T00:00:00.000Z',
}));
const builtIn = new ProjectPricing(compileModels(builtInDefs));

// Building an encoder from its ranks takes seconds on a busy machine: once, outside any test's timeout.
beforeAll(() => {
  warmTokenizers();
}, 120_000);

const tier = (prices: Record<string, number>, extra: Partial<PricingTier> = {}): PricingTier => ({
  id: 't-default',
  name: 'Standard',
  isDefault: true,
  priority: 0,
  conditions: [],
  prices,
  ...extra,
});
const def = (over: Partial<ModelDefinition>): ModelDefinition => ({
  id: 'm',
  projectId: null,
  modelName: 'm',
  matchPattern: '(?i)^m$',
  startDate: null,
  unit: 'TOKENS',
  tokenizerId: null,
  tokenizerConfig: null,
  pricingTiers: [tier({ input: 1, output: 2 })],
  createdAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('patterns', () => {
  it.each([
    ['(?i)^gpt-4o$', 'GPT-4O', true],
    ['^gpt-4o$', 'GPT-4O', false],
    ['(?i)^(openai/)?(gpt-4(-\\d{4})?-vision-preview)$', 'openai/gpt-4-1106-vision-preview', true],
    ['gpt', 'my-gpt-model', true],
  ])('%s on %s: %s', (pattern, name, expected) => {
    expect(compilePattern(pattern).test(name)).toBe(expected);
  });

  it.each([
    ['(a', /not a valid RE2/],
    ['(a)\\1', /not a valid RE2/],
    ['(?=a)b', /not a valid RE2/],
    ['', /empty/],
    ['a'.repeat(501), /longer than 500/],
  ])('refuses %s', (pattern, reason) => {
    expect(patternProblem(pattern)).toMatch(reason);
  });

  it('evaluates a classic catastrophic pattern in linear time (RE2 does not backtrack)', () => {
    const re = compilePattern('^(a+)+$');
    // 30 characters would take a backtracking engine about 2^30 steps.
    expect(re.test(`${'a'.repeat(30)}!`)).toBe(false);
    expect(re.test('a'.repeat(30))).toBe(true);
  });
});

describe('matching a model name at a time', () => {
  const models = compileModels([
    def({ id: 'builtin-old', startDate: null }),
    def({ id: 'builtin-2025', startDate: '2025-01-01T00:00:00.000Z' }),
    def({ id: 'own', projectId: 'p', startDate: '2025-06-01T00:00:00.000Z' }),
    def({ id: 'other', matchPattern: '(?i)^other$' }),
  ]);
  it.each([
    ['2024-06-01T00:00:00Z', 'm', 'builtin-old'],
    ['2025-01-01T00:00:00Z', 'm', 'builtin-2025'],
    ['2025-05-31T23:59:59Z', 'M', 'builtin-2025'],
    ['2025-06-01T00:00:00Z', 'm', 'own'],
    ['2026-01-01T00:00:00Z', 'other', 'other'],
    ['2026-01-01T00:00:00Z', 'nothing', null],
  ])('at %s, %s -> %s', (at, name, id) => {
    expect(matchModel(models, name, Date.parse(at))?.id ?? null).toBe(id);
  });

  it('a project definition without a start date wins over a newer built-in one', () => {
    const m = compileModels([
      def({ id: 'b', startDate: '2026-01-01T00:00:00Z' }),
      def({ id: 'p', projectId: 'x' }),
    ]);
    expect(matchModel(m, 'm', Date.parse('2026-06-01T00:00:00Z'))?.id).toBe('p');
  });

  it.each([
    ['gpt-4o', 'gpt-4o'],
    ['openai/gpt-4o', 'gpt-4o'],
    ['gpt-4o-mini', 'gpt-4o-mini'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5-20250929'],
    ['gemini-2.5-pro', 'gemini-2.5-pro'],
    ['mistral-large-latest', 'mistral-large-2512'],
    ['mistral/mistral-small-latest', 'mistral-small-2603'],
    ['meta-llama/Llama-3.3-70B-Instruct-Turbo', 'Llama-3.3-70B-Instruct-Turbo (Together AI)'],
    ['us.meta.llama4-maverick-17b-instruct-v1:0', 'meta.llama4-maverick-17b-instruct-v1:0 (Amazon Bedrock)'],
  ])('the built-in prices know %s as %s', (name, modelName) => {
    expect(builtIn.modelFor(name, Date.now())?.modelName).toBe(modelName);
  });
});

describe('tiers', () => {
  const gemini = builtIn.modelFor('gemini-2.5-pro', Date.now())!;
  const none = { modelParameters: {}, metadata: {} };
  it.each([
    [200_000, 'Standard'],
    [200_001, 'Large Context'],
  ])('gemini-2.5-pro with %i prompt tokens: %s', (input, name) => {
    expect(selectTier(gemini.pricingTiers, { input, output: 10 }, none)?.name).toBe(name);
  });

  it.each([
    // Google's published prices: $1.25 / $10 per million up to 200k prompt tokens, $2.50 / $15 above.
    [100_000, 1_000, 0.125 + 0.01],
    [300_000, 1_000, 0.75 + 0.015],
  ])('gemini-2.5-pro costs %i in / %i out at USD %f', (input, output, total) => {
    const t = selectTier(gemini.pricingTiers, { input, output }, none)!;
    expect(costOf(t.prices, { input, output })['total']).toBeCloseTo(total, 12);
  });

  const tiers = [
    tier({ input: 1 }),
    tier(
      { input: 3 },
      {
        id: 'fast',
        name: 'Fast',
        isDefault: false,
        priority: 2,
        conditions: [
          { source: 'model_parameters', key: 'service_tier', operator: 'in', values: ['priority'] },
        ],
      },
    ),
    tier(
      { input: 2 },
      {
        id: 'big',
        name: 'Big',
        isDefault: false,
        priority: 1,
        conditions: [{ usageDetailPattern: '^input', operator: 'gte', value: 100, caseSensitive: true }],
      },
    ),
  ];
  it.each([
    [{ input: 99 }, {}, 'Standard'],
    [{ input: 60, input_cached: 40 }, {}, 'Big'],
    [{ INPUT: 500 }, {}, 'Standard'],
    [{ input: 5 }, { service_tier: 'priority' }, 'Fast'],
    [{ input: 500 }, { service_tier: 'priority' }, 'Big'],
    [{ input: 5 }, { service_tier: 'default' }, 'Standard'],
  ])('usage %j with parameters %j -> %s (lower priority first)', (usage, params, name) => {
    expect(selectTier(tiers, usage, { modelParameters: params, metadata: {} })?.name).toBe(name);
  });
});

describe('cost per usage type', () => {
  it.each([
    [
      { input: 1e-6, output: 2e-6 },
      { input: 1000, output: 500, total: 1500 },
      { input: 0.001, output: 0.001, total: 0.002 },
    ],
    [{ total: 1e-3 }, { input: 10, output: 20, total: 30 }, { total: 0.03 }],
    [
      { input: 1e-6, input_cache_read: 1e-7 },
      { input: 100, input_cache_read: 1000 },
      { input: 0.0001, input_cache_read: 0.0001, total: 0.0002 },
    ],
    [{ input: 1e-6 }, { output: 10 }, {}],
    // A cost the Decimal(18, 12) columns cannot hold stays unknown.
    [{ input: 1e-3 }, { input: 1e9 }, {}],
  ])('prices %j on usage %j -> %j', (prices, usage, expected) => {
    expect(costOf(prices, usage)).toEqual(expected);
  });

  it('gpt-4o: OpenAI publishes $2.50 per million input and $10 per million output tokens', () => {
    const priced = priceGeneration(builtIn, {
      modelName: 'gpt-4o',
      at: Date.now(),
      providedCost: {},
      providedUsage: { input: 1000, output: 500, total: 1500 },
      input: null,
      output: null,
      attributes: { modelParameters: {}, metadata: {} },
    });
    expect(priced?.cost).toEqual({ input: 0.0025, output: 0.005, total: 0.0075 });
    expect(priced?.tier?.name).toBe('Standard');
  });
});

describe('usage inferred by the tokenizer', () => {
  const gpt4 = { tokenizerModel: 'gpt-4', tokensPerMessage: 3, tokensPerName: 1 };
  // The OpenAI cookbook "How to count tokens with tiktoken": 3 tokens per message, 1 more per
  // name, 3 priming the reply; "tiktoken is great!" is 6 cl100k tokens, "system" and "user" one each.
  it('counts chat messages as OpenAI counts them', () => {
    const messages = [
      { role: 'system', content: 'tiktoken is great!' },
      { role: 'user', name: 'tiktoken is great!', content: 'tiktoken is great!' },
    ];
    expect(inferUsage('openai', gpt4, JSON.stringify(messages), null)).toEqual({ input: 30, total: 30 });
    expect(inferUsage('openai', gpt4, JSON.stringify({ messages }), null)).toEqual({ input: 30, total: 30 });
  });
  it('counts text with the model encoding ("tiktoken is great!" is 6 cl100k tokens)', () => {
    expect(inferUsage('openai', gpt4, 'tiktoken is great!', '"tiktoken is great!"')).toEqual({
      input: 6,
      output: 6,
      total: 12,
    });
  });
  it('counts a completion message by its content', () => {
    const out = JSON.stringify({ role: 'assistant', content: 'tiktoken is great!' });
    expect(inferUsage('openai', gpt4, null, out)).toEqual({ output: 6, total: 6 });
  });
  it.each([
    [null, gpt4],
    ['openai', null],
    ['sentencepiece', null],
  ])('tokenizer %s (config %j): usage unknown, not 0', (id, cfg) => {
    expect(inferUsage(id, cfg, 'hello', 'world')).toBeNull();
  });

  // The judge is Anthropic's own package (its countTokens runs the WASM tiktoken on the same ranks).
  const claudeTexts = [
    'hello',
    'Hello, world! How are you today?',
    'ﬁnancial ｆｕｌｌｗｉｄｔｈ — NFKC folds these',
    '日本語のテキストと emoji 🎉🎉',
    'def f(x):\n    return x ** 2  # code\n\n\n',
    'a'.repeat(2000),
  ];
  it.each(claudeTexts.map((t) => [t.slice(0, 24), t]))(
    'claude: %j… counts as @anthropic-ai/tokenizer does',
    (_, text) => {
      const n = anthropicCountTokens(text);
      expect(n).toBeGreaterThan(0);
      expect(inferUsage('claude', null, text, JSON.stringify(text))).toEqual({
        input: n,
        output: n,
        total: 2 * n,
      });
    },
  );
  it('claude: chat messages are counted as their JSON text, as the reference does', () => {
    const messages = [{ role: 'user', content: 'What is the capital of France?' }];
    const n = anthropicCountTokens(JSON.stringify(messages));
    expect(inferUsage('claude', null, JSON.stringify(messages), null)).toEqual({ input: n, total: n });
    expect(inferUsage('claude', null, null, null)).toBeNull();
  });
});

describe('the usage stored from the usage sent', () => {
  // The reference's rule: a sent map without `total` gets the sum of every sent type.
  it.each([
    [{}, {}],
    [
      { input: 10, output: 5 },
      { input: 10, output: 5, total: 15 },
    ],
    [
      { input: 10, input_cached_tokens: 4, output: 5 },
      { input: 10, input_cached_tokens: 4, output: 5, total: 19 },
    ],
    [
      { input: 10, output: 5, total: 12 },
      { input: 10, output: 5, total: 12 },
    ],
    [{ total: 0 }, { total: 0 }],
  ])('%j -> %j', (sent, stored) => {
    expect(usageWithTotal(sent)).toEqual(stored);
  });
});

describe('the rows ingestion writes', () => {
  const start = '2026-11-01T10:00:00.000Z';
  const legacy = (over: Record<string, unknown>): Record<string, unknown> => ({
    provided_model_name: 'gpt-4o',
    start_time: chTime(start),
    provided_usage_details: { input: 1000, output: 500, total: 1500 },
    usage_details: { input: 1000, output: 500, total: 1500 },
    provided_cost_details: {},
    cost_details: {},
    total_cost: null,
    input: null,
    output: null,
    model_parameters: null,
    metadata: {},
    ...over,
  });

  it('a legacy row with usage and no cost gets the cost, the model id and the tier', () => {
    const row = legacy({});
    priceLegacyRow(builtIn, row);
    expect(row).toMatchObject({
      internal_model_id: 'b9854a5c92dc496b997d99d20',
      cost_details: { input: 0.0025, output: 0.005, total: 0.0075 },
      total_cost: 0.0075,
      usage_pricing_tier_name: 'Standard',
    });
  });

  it('a cost the SDK sent wins; usage read back as text from the store still prices', () => {
    const sent = legacy({ provided_cost_details: { total: 1 }, cost_details: { total: 1 }, total_cost: 1 });
    priceLegacyRow(builtIn, sent);
    expect(sent).toMatchObject({
      cost_details: { total: 1 },
      total_cost: 1,
      internal_model_id: 'b9854a5c92dc496b997d99d20',
    });
    const textual = legacy({ provided_usage_details: { input: '1000', output: '500', total: '1500' } });
    priceLegacyRow(builtIn, textual);
    expect(textual['total_cost']).toBe(0.0075);
  });

  it('the fast tier applies from the model parameters', () => {
    const row = legacy({ model_parameters: JSON.stringify({ service_tier: 'priority' }) });
    priceLegacyRow(builtIn, row);
    expect(row['usage_pricing_tier_name']).toBe('Fast mode');
  });

  it('no usage: inferred from input and output and stored as usage_details, not provided', () => {
    const row = legacy({
      provided_usage_details: {},
      usage_details: {},
      input: JSON.stringify([{ role: 'user', content: 'tiktoken is great!' }]),
      output: 'tiktoken is great!',
    });
    priceLegacyRow(builtIn, row);
    // o200k: 3 per message + role ("user", 1) + content (6) + 3 priming = 13; the output 6.
    expect(row['usage_details']).toEqual({ input: 13, output: 6, total: 19 });
    expect(row['provided_usage_details']).toEqual({});
    expect(row['total_cost']).toBeCloseTo(13 * 2.5e-6 + 6 * 10e-6, 12);
  });

  it('an unknown model keeps the row as sent', () => {
    const unknown = legacy({ provided_model_name: 'my-own-llm' });
    priceLegacyRow(builtIn, unknown);
    expect(unknown).toMatchObject({ internal_model_id: null, cost_details: {}, total_cost: null });
  });

  it('a Claude generation without usage is counted by the claude tokenizer and priced', () => {
    const claude = legacy({
      provided_model_name: 'claude-sonnet-4-5-20250929',
      provided_usage_details: {},
      usage_details: {},
      input: 'hello',
    });
    priceLegacyRow(builtIn, claude);
    const n = anthropicCountTokens('hello');
    expect(claude['usage_details']).toEqual({ input: n, total: n });
    expect(claude['internal_model_id']).not.toBeNull();
    // Claude Sonnet 4.5 lists $3 per million input tokens (Anthropic's pricing page).
    expect(claude['total_cost']).toBeCloseTo(n * 3e-6, 12);
  });

  it('an events row with a sent cost without total gets the total, as a legacy row does', () => {
    const row: Record<string, unknown> = {
      provided_model_name: '',
      provided_cost_details: { input: 0.5, output: 0.25 },
      cost_details: { input: 0.5, output: 0.25 },
    };
    priceEventRow(builtIn, row);
    expect(row['cost_details']).toEqual({ input: 0.5, output: 0.25, total: 0.75 });
    expect(row['provided_cost_details']).toEqual({ input: 0.5, output: 0.25 });
  });

  it('an events row gets model_id, cost_details and the tier', () => {
    const row: Record<string, unknown> = {
      provided_model_name: 'gpt-4o-mini',
      start_time: chTime(start, 6),
      provided_usage_details: { input: 1_000_000, output: 1_000_000 },
      usage_details: { input: 1_000_000, output: 1_000_000 },
      provided_cost_details: {},
      cost_details: {},
      model_id: '',
      input: '',
      output: '',
      model_parameters: '',
      metadata_names: [],
      metadata_values: [],
    };
    priceEventRow(builtIn, row);
    // OpenAI: gpt-4o-mini $0.15 / $0.60 per million.
    expect(row['cost_details']).toEqual({ input: 0.15, output: 0.6, total: 0.75 });
    expect(row['model_id']).not.toBe('');
    expect(row['usage_details']).toEqual({ input: 1_000_000, output: 1_000_000, total: 2_000_000 });
    expect(row['provided_usage_details']).toEqual({ input: 1_000_000, output: 1_000_000 });
  });
});

describe('validation', () => {
  it.each([
    [
      { modelName: 'x', matchPattern: '(x', unit: 'TOKENS', inputPrice: 1 },
      /matchPattern: pattern is not a valid/,
    ],
    [{ modelName: 'x', matchPattern: 'x', unit: 'TOKENS' }, /pricingTiers: provide either/],
    [
      { modelName: 'x', matchPattern: 'x', unit: 'TOKENS', inputPrice: 1, totalPrice: 1 },
      /totalPrice: must be null/,
    ],
    [{ modelName: 'x', matchPattern: 'x', unit: 'LITRES', inputPrice: 1 }, /unit/],
    [{ modelName: 'x', matchPattern: 'x', unit: 'TOKENS', inputPrice: -1 }, /inputPrice/],
    [
      {
        modelName: 'x',
        matchPattern: 'x',
        unit: 'TOKENS',
        pricingTiers: [{ name: 'a', isDefault: false, priority: 1, conditions: [], prices: { input: 1 } }],
      },
      /exactly one tier must have isDefault=true/,
    ],
  ])('%j is refused naming the field', (body, message) => {
    const r = createModelRequest.safeParse(body);
    expect(r.success).toBe(false);
    const text = r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    expect(text).toMatch(message);
  });

  it('the built-in price file is valid and every entry names its source and date', () => {
    expect(BUILT_IN.length).toBeGreaterThan(150);
    for (const e of BUILT_IN) {
      expect(e.source).not.toBe('');
      expect(e.sourceDate).toMatch(/^20\d\d-\d\d-\d\d$/);
    }
    const providers = new Set(BUILT_IN.map((e) => e.modelName.split(/[-.]/)[0]!.toLowerCase()));
    for (const p of ['gpt', 'claude', 'gemini', 'mistral']) expect(providers).toContain(p);
  });

  it('a price file with a bad entry is refused naming it', () => {
    expect(() => parsePriceFile('[{"id":"a"}]', 'f.json')).toThrow(/f\.json: 0\.modelName/);
    expect(() => parsePriceFile('nope', 'f.json')).toThrow(/not JSON/);
  });
});

describe('prices as decimal strings (the Observations API v2 model group)', () => {
  it.each([
    [0.0001, '0.0001'],
    [0.000003, '0.000003'],
    [1.25e-7, '0.000000125'],
    [1e-12, '0.000000000001'],
    [2.5, '2.5'],
    [0, '0'],
    [1e21, '1000000000000000000000'],
  ])('%s is %s', (price, text) => {
    expect(decimalText(price)).toBe(text);
  });
});

describe('patterns remembered per process', () => {
  it('compiles a pattern once, whichever project reloads it, apart by case sensitivity', () => {
    const a = rememberedPattern('(?i)^gpt-4o$');
    expect(rememberedPattern('(?i)^gpt-4o$')).toBe(a);
    expect(rememberedPattern('(?i)^gpt-4o$', true)).not.toBe(a);
    const [first] = compileModels(builtInDefs.slice(0, 1));
    const [again] = compileModels(builtInDefs.slice(0, 1));
    expect(again!.re).toBe(first!.re);
  });
});
