/**
 * Usage inferred from a generation's input and output when it reports none, with the tokenizer
 * its model definition names. OpenAI's BPE through js-tiktoken (the maintained pure-JS port);
 * chat messages are counted as OpenAI counts them (a fixed cost per message and per name, plus
 * the reply's priming). `claude`: the BPE Anthropic publishes in `@anthropic-ai/tokenizer` (exact
 * for Claude 2, an estimate for later models; the reference counts the same way), run by the same
 * js-tiktoken engine on NFKC-normalised text. Any other tokenizer gives no usage (unknown), never 0.
 */

import claudeRanks from '@anthropic-ai/tokenizer/dist/cjs/claude.json' with { type: 'json' };
import {
  getEncodingNameForModel,
  Tiktoken,
  type TiktokenEncoding,
  type TiktokenModel,
} from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';

const RANKS = { cl100k_base: cl100k, o200k_base: o200k } as const;
const encoders = new Map<string, Tiktoken>();

/** The encoding of an OpenAI model; names js-tiktoken does not know yet take the newest family's. */
export function encodingFor(model: string): keyof typeof RANKS {
  let name: TiktokenEncoding;
  try {
    name = getEncodingNameForModel(model as TiktokenModel);
  } catch {
    name = /^(gpt-3\.5|gpt-4(?!o|\.[15])|text-embedding|davinci|babbage)/.test(model)
      ? 'cl100k_base'
      : 'o200k_base';
  }
  return name === 'cl100k_base' ? 'cl100k_base' : 'o200k_base';
}

function encoder(model: string): Tiktoken {
  const name = encodingFor(model);
  let enc = encoders.get(name);
  if (!enc) {
    enc = new Tiktoken(RANKS[name]);
    encoders.set(name, enc);
  }
  return enc;
}

/**
 * Builds the encoders now: decoding the ranks takes about half a second of CPU each (seconds on a
 * busy machine), which the first generation to need one would otherwise wait for, blocking the
 * event loop. A web that writes the store itself calls it before it listens, so readiness includes it.
 */
export function warmTokenizers(): void {
  for (const model of ['gpt-4', 'gpt-4o']) encoder(model);
  claudeEncoder();
}

/** The tokenizer configuration of OpenAI definitions (the reference's keys). */
export interface OpenAiTokenizerConfig {
  tokenizerModel: string;
  tokensPerMessage: number;
  tokensPerName: number;
}

function openAiConfig(config: unknown): OpenAiTokenizerConfig | null {
  const c = (config ?? {}) as Record<string, unknown>;
  if (typeof c['tokenizerModel'] !== 'string') return null;
  return {
    tokenizerModel: c['tokenizerModel'],
    tokensPerMessage: typeof c['tokensPerMessage'] === 'number' ? c['tokensPerMessage'] : 3,
    tokensPerName: typeof c['tokensPerName'] === 'number' ? c['tokensPerName'] : 1,
  };
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

type Message = Record<string, unknown> & { role: string };
const isMessage = (v: unknown): v is Message =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Message).role === 'string';

/** The chat messages a value holds: a list of messages or `{messages: [...]}`; else null. */
function messagesOf(v: unknown): Message[] | null {
  const list = Array.isArray(v) ? v : (v as { messages?: unknown } | null)?.messages;
  return Array.isArray(list) && list.length > 0 && list.every(isMessage) ? list : null;
}

const textOf = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** Tokens of chat messages: per message a fixed cost, each field's tokens, a name's extra; +3 for the reply. */
function chatTokens(enc: Tiktoken, messages: Message[], cfg: OpenAiTokenizerConfig): number {
  let n = 3;
  for (const m of messages) {
    n += cfg.tokensPerMessage;
    for (const [k, v] of Object.entries(m)) {
      if (v === undefined || v === null) continue;
      n += enc.encode(textOf(v)).length;
      if (k === 'name') n += cfg.tokensPerName;
    }
  }
  return n;
}

/** Tokens of one stored value (JSON text or plain text); chat messages counted as OpenAI does. */
function valueTokens(
  enc: Tiktoken,
  text: string,
  cfg: OpenAiTokenizerConfig,
  side: 'input' | 'output',
): number {
  const v = parseJson(text);
  const messages = side === 'input' ? messagesOf(v) : null;
  if (messages) return chatTokens(enc, messages, cfg);
  // A completion is counted by its content: a message's text, not its JSON envelope.
  const content = isMessage(v) && typeof v['content'] === 'string' ? v['content'] : v;
  return enc.encode(textOf(content)).length;
}

/**
 * `{input, output, total}` tokens for a generation's stored input and output (either may be
 * absent), or null when the tokenizer is unknown or there is nothing to count.
 */
export function inferUsage(
  tokenizerId: string | null,
  tokenizerConfig: unknown,
  input: string | null,
  output: string | null,
): Record<string, number> | null {
  if (tokenizerId === 'claude') return input || output ? usageOf(input, output, claudeTokens) : null;
  if (tokenizerId !== 'openai') return null;
  const cfg = openAiConfig(tokenizerConfig);
  if (!cfg || (!input && !output)) return null;
  const enc = encoder(cfg.tokenizerModel);
  return usageOf(input, output, (text, side) => valueTokens(enc, text, cfg, side));
}

/** `{input?, output?, total}` from a counter of one side's tokens. */
function usageOf(
  input: string | null,
  output: string | null,
  count: (text: string, side: 'input' | 'output') => number,
): Record<string, number> {
  const usage: Record<string, number> = {};
  if (input) usage['input'] = count(input, 'input');
  if (output) usage['output'] = count(output, 'output');
  usage['total'] = (usage['input'] ?? 0) + (usage['output'] ?? 0);
  return usage;
}

let claude: Tiktoken | undefined;
function claudeEncoder(): Tiktoken {
  claude ??= new Tiktoken(claudeRanks);
  return claude;
}

/** Tokens of one stored value as Anthropic's tokenizer counts it: text as is, anything else as JSON. */
function claudeTokens(text: string): number {
  const v = parseJson(text);
  return claudeEncoder().encode(textOf(v).normalize('NFKC'), 'all').length;
}
