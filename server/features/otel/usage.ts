import { COST_LIMIT_USD, MAX_TOKEN_COUNT } from '../write-model/limits.ts';
import type { IndexedAttributes } from './attribute-index.ts';
import { type Attributes, attr, isPlainObject, LF, parseJsonish, VERCEL_AI_SCOPE } from './attributes.ts';
import { OtlpValidationError } from './errors.ts';

/** A number, or text that spells one (`NaN` included); null for anything else. */
function numeric(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const n = Number(value);
  return Number.isNaN(n) && value.trim().toLowerCase() !== 'nan' ? null : n;
}

/**
 * A number that must be finite and non-negative (a token count, a cost): a negative, NaN or infinite
 * one is refused, naming `field`, instead of being stored or dropped unseen. Null when not a number.
 */
export function nonNegative(value: unknown, field: string, what = 'token counts'): number | null {
  const n = numeric(value);
  if (n === null) return null;
  if (!Number.isFinite(n) || n < 0) {
    throw new OtlpValidationError(
      'export',
      `${field} is ${String(value)}: ${what} must be finite and non-negative`,
      field,
    );
  }
  // Beyond what the store's columns hold (UInt64 counts read as JS numbers, Decimal(18, 12) costs).
  const costs = what === 'costs';
  if (costs ? n >= COST_LIMIT_USD : n > MAX_TOKEN_COUNT) {
    throw new OtlpValidationError(
      'export',
      `${field} is ${String(value)}: ${what} must be ${costs ? `below ${COST_LIMIT_USD}` : `at most ${MAX_TOKEN_COUNT}`}`,
      field,
    );
  }
  return n;
}

/** A token count as stored (UInt64), rounded; null for a value that is no number. */
function count(value: unknown, field: string): number | null {
  const n = nonNegative(value, field);
  return n === null ? null : Math.round(n);
}

/** Keeps the counts; an entry that is no number at all is dropped alone rather than discarding the whole usage. */
function counts(obj: Record<string, unknown>, field: string): Record<string, number> {
  const entries: [string, number][] = [];
  for (const [key, value] of Object.entries(obj)) {
    const n = count(value, `${field}.${key}`);
    if (n !== null) entries.push([key, n]);
  }
  return Object.fromEntries(entries);
}

const COMPLETION_KEYS = [
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'prompt_tokens_details',
  'completion_tokens_details',
];
const RESPONSE_KEYS = [
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'input_tokens_details',
  'output_tokens_details',
];

/** Matches one of OpenAI's usage objects exactly (as the reference's strict schemas do): the three totals, optional detail maps. */
function isOpenAiShape(obj: Record<string, unknown>, keys: string[]): boolean {
  const [input, output, total, inDetails, outDetails] = keys as [string, string, string, string, string];
  const integer = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  const details = (v: unknown) =>
    v === undefined ||
    v === null ||
    (isPlainObject(v) && Object.values(v).every((d) => d === null || integer(d)));
  return (
    Object.keys(obj).every((k) => keys.includes(k)) &&
    integer(obj[input]) &&
    integer(obj[output]) &&
    integer(obj[total]) &&
    details(obj[inDetails]) &&
    details(obj[outDetails])
  );
}

/**
 * OpenAI usage → Langfuse keys: totals become input/output/total; each detail becomes `input_<k>`/`output_<k>`
 * and is subtracted from its side, so that the parts add up (cached tokens are not billed as fresh input).
 */
function fromOpenAi(obj: Record<string, unknown>, keys: string[]): Record<string, number> {
  const [input, output, total, inDetails, outDetails] = keys as [string, string, string, string, string];
  const result: Record<string, number> = {
    input: obj[input] as number,
    output: obj[output] as number,
    total: obj[total] as number,
  };
  for (const [side, detailsKey] of [
    ['input', inDetails],
    ['output', outDetails],
  ] as const) {
    const details = obj[detailsKey];
    if (!isPlainObject(details)) continue;
    for (const [key, value] of Object.entries(details)) {
      if (typeof value !== 'number') continue;
      result[`${side}_${key}`] = value;
      result[side] = Math.max((result[side] ?? 0) - value, 0);
    }
  }
  return result;
}

/** A usage object in any accepted form: OpenAI chat-completions usage, OpenAI responses usage, or a flat map. */
export function normalizeUsage(obj: Record<string, unknown>, field: string): Record<string, number> {
  if (isOpenAiShape(obj, COMPLETION_KEYS)) return fromOpenAi(obj, COMPLETION_KEYS);
  if (isOpenAiShape(obj, RESPONSE_KEYS)) return fromOpenAi(obj, RESPONSE_KEYS);
  return counts(obj, field);
}

/** Vercel AI SDK: totals from gen_ai.usage.*, details from ai.usage.* and provider metadata; details are subtracted. */
function vercelUsage(attrs: Attributes): Record<string, number | undefined> {
  const has = (k: string) => Object.hasOwn(attrs, k);
  const int = (k: string) => count(attr(attrs, k), k) ?? 0;
  const usage: Record<string, number | undefined> = {
    input: has('gen_ai.usage.prompt_tokens')
      ? int('gen_ai.usage.prompt_tokens')
      : has('gen_ai.usage.input_tokens')
        ? int('gen_ai.usage.input_tokens')
        : undefined,
    output: has('gen_ai.usage.completion_tokens')
      ? int('gen_ai.usage.completion_tokens')
      : has('gen_ai.usage.output_tokens')
        ? int('gen_ai.usage.output_tokens')
        : undefined,
    total: has('ai.usage.tokens') ? int('ai.usage.tokens') : undefined,
  };
  if (has('ai.usage.cachedInputTokens')) usage.input_cached_tokens = int('ai.usage.cachedInputTokens');
  if (has('ai.usage.reasoningTokens')) usage.output_reasoning_tokens = int('ai.usage.reasoningTokens');

  const provider = parseJsonish(attr(attrs, 'ai.response.providerMetadata'));
  if (isPlainObject(provider)) addProviderUsage(usage, provider);

  const minus = (...keys: string[]) => keys.reduce((sum, k) => sum + (usage[k] ?? 0), 0);
  usage.input = Math.max(
    (usage.input ?? 0) -
      minus(
        'input_cached_tokens',
        'input_cache_creation',
        'input_cache_creation_5m',
        'input_cache_creation_1h',
        'input_cache_read',
      ),
    0,
  );
  usage.output = Math.max((usage.output ?? 0) - minus('output_reasoning_tokens'), 0);
  return usage;
}

/** Cache and reasoning details that only the provider-specific metadata carries (OpenAI, Anthropic, Bedrock). */
function addProviderUsage(
  usage: Record<string, number | undefined>,
  provider: Record<string, unknown>,
): void {
  const setIfAbsent = (key: string, value: unknown) => {
    const n = count(value, `ai.response.providerMetadata (${key})`);
    if (usage[key] === undefined && n !== null) usage[key] = n;
  };
  const openai = provider.openai;
  if (isPlainObject(openai)) {
    setIfAbsent('input_cached_tokens', openai.cachedPromptTokens);
    setIfAbsent('accepted_prediction_tokens', openai.acceptedPredictionTokens);
    setIfAbsent('rejected_prediction_tokens', openai.rejectedPredictionTokens);
    setIfAbsent('output_reasoning_tokens', openai.reasoningTokens);
  }
  const anthropic = isPlainObject(provider.anthropic) ? provider.anthropic.usage : undefined;
  if (isPlainObject(anthropic)) {
    setIfAbsent('input_cache_creation', anthropic.cache_creation_input_tokens);
    setIfAbsent('input_cached_tokens', anthropic.cache_read_input_tokens);
    const byTtl = anthropic.cache_creation;
    if (isPlainObject(byTtl)) {
      setIfAbsent('input_cache_creation_5m', byTtl.ephemeral_5m_input_tokens);
      setIfAbsent('input_cache_creation_1h', byTtl.ephemeral_1h_input_tokens);
      // The TTL buckets are part of the creation total; keep only the unattributed rest to avoid double counting.
      usage.input_cache_creation = Math.max(
        (usage.input_cache_creation ?? 0) -
          (usage.input_cache_creation_5m ?? 0) -
          (usage.input_cache_creation_1h ?? 0),
        0,
      );
    }
  }
  const bedrock = isPlainObject(provider.bedrock) ? provider.bedrock.usage : undefined;
  if (isPlainObject(bedrock)) {
    setIfAbsent('input_cache_read', bedrock.cacheReadInputTokens);
    setIfAbsent('input_cache_write', bedrock.cacheWriteInputTokens);
    setIfAbsent('input_cache_creation', bedrock.cacheCreationInputTokens);
  }
}

/**
 * Counts of `gen_ai.usage.*` / `llm.token_count.*` (prefix removed) that name the same quantity under
 * different conventions: OTel GenAI (`cache_read.input_tokens`, `reasoning.output_tokens`, …),
 * Pydantic AI (`details.*`), OpenInference (`prompt_details.*`, `completion_details.*`) and the
 * Langfuse names themselves. The first one sent wins, in the reference's order.
 */
const GENERIC_ALIASES: readonly (readonly [string, readonly string[]])[] = [
  ['input', ['prompt_tokens', 'input_tokens', 'prompt']],
  ['output', ['completion_tokens', 'output_tokens', 'completion']],
  ['total', ['total_tokens', 'total']],
  [
    'input_cached_tokens',
    [
      'cache_read.input_tokens',
      'cache_read_input_tokens',
      'cache_read_tokens',
      'details.cache_read_tokens',
      'details.cache_read_input_tokens',
      'prompt_details.cache_read',
      'input_cached_tokens',
    ],
  ],
  [
    'input_cache_creation',
    [
      'cache_creation.input_tokens',
      'cache_creation_input_tokens',
      'cache_write_tokens',
      'details.cache_write_tokens',
      'details.cache_creation_input_tokens',
      'prompt_details.cache_write',
      'input_cache_creation',
    ],
  ],
  ['output_reasoning_tokens', ['reasoning.output_tokens', 'completion_details.reasoning']],
  ['output_audio_tokens', ['completion_details.audio']],
];
const ALIASED = new Set(GENERIC_ALIASES.flatMap(([, sources]) => sources));

/**
 * Generic usage: aliases unified, other keys kept (a `details.` prefix dropped). Input and output
 * counts include their cache and reasoning/audio parts (the GenAI conventions say so), so the parts
 * are subtracted to keep every token in exactly one priced usage type.
 */
function genericUsage(index: IndexedAttributes): Record<string, number> {
  const raw = new Map(index.usage);
  // A Map, not an object: attribute names like `__proto__` are ordinary keys here.
  const unified = new Map<string, unknown>();
  for (const [name, value] of index.usage) {
    if (!ALIASED.has(name))
      unified.set(name.startsWith('details.') ? name.slice('details.'.length) : name, value);
  }
  for (const [target, sources] of GENERIC_ALIASES) {
    const source = sources.find((s) => numeric(raw.get(s)) !== null);
    if (source !== undefined) unified.set(target, raw.get(source));
  }
  const usage = counts(Object.fromEntries(unified), 'gen_ai.usage / llm.token_count');
  const part = (key: string) => usage[key] ?? 0;
  if (usage.input !== undefined) {
    usage.input = Math.max(usage.input - part('input_cached_tokens') - part('input_cache_creation'), 0);
  }
  if (usage.output !== undefined) {
    usage.output = Math.max(usage.output - part('output_reasoning_tokens') - part('output_audio_tokens'), 0);
  }
  return usage;
}

/** Token usage of a span: the Langfuse JSON attribute, else the framework conventions. */
export function extractUsageDetails(index: IndexedAttributes, scopeName: string): Record<string, number> {
  const { attrs } = index;
  const langfuse = parseJsonish(attr(attrs, LF.OBSERVATION_USAGE_DETAILS) || undefined);
  if (isPlainObject(langfuse)) return normalizeUsage(langfuse, LF.OBSERVATION_USAGE_DETAILS);
  if (scopeName === VERCEL_AI_SCOPE) return counts(vercelUsage(attrs), 'usage');
  return genericUsage(index);
}

/** Cost in USD: the Langfuse JSON attribute, else a single total from `gen_ai.usage.cost` / `llm.cost.total`. */
export function extractCostDetails(attrs: Attributes): Record<string, number> {
  const langfuse = parseJsonish(attr(attrs, LF.OBSERVATION_COST_DETAILS) || undefined);
  if (isPlainObject(langfuse)) {
    const entries: [string, number][] = [];
    for (const [key, value] of Object.entries(langfuse)) {
      const n = nonNegative(value, `${LF.OBSERVATION_COST_DETAILS}.${key}`, 'costs');
      if (n !== null) entries.push([key, n]);
    }
    return Object.fromEntries(entries);
  }
  for (const key of ['gen_ai.usage.cost', 'llm.cost.total']) {
    const value = attr(attrs, key);
    const n = value ? nonNegative(value, key, 'costs') : null;
    if (n !== null) return { total: n };
  }
  return {};
}
