/**
 * The provider adapters, built and read here (pure), sent by guarded-http.ts: one structured-output
 * chat request per judgment (`openai` speaks Chat Completions with `response_format: json_schema` to
 * any OpenAI-compatible base URL; `anthropic` speaks Messages with one forced tool whose input
 * schema is the answer's), and a free-form completion for the prompt playground.
 */
export const ADAPTERS = ['openai', 'anthropic'] as const;
export type Adapter = (typeof ADAPTERS)[number];

export const DEFAULT_BASE_URLS: Record<Adapter, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
};

export interface ChatRequest {
  model: string;
  system: string;
  user: string;
  /** JSON schema of the answer (an object). */
  schema: Record<string, unknown>;
  maxTokens: number;
}

export interface HttpCall {
  url: URL;
  headers: Record<string, string>;
  body: unknown;
}

const join = (base: string, path: string) => new URL(`${base.replace(/\/+$/, '')}${path}`);

/** A connection's adapter, address and credentials: what every call is built from. */
export interface Endpoint {
  adapter: Adapter;
  baseURL: string | null;
  secretKey: string;
  extraHeaders: Record<string, string>;
}

function target(e: Endpoint): Omit<HttpCall, 'body'> {
  const base = e.baseURL ?? DEFAULT_BASE_URLS[e.adapter];
  return e.adapter === 'anthropic'
    ? {
        url: join(base, '/messages'),
        headers: { ...e.extraHeaders, 'x-api-key': e.secretKey, 'anthropic-version': '2023-06-01' },
      }
    : {
        url: join(base, '/chat/completions'),
        headers: { ...e.extraHeaders, authorization: `Bearer ${e.secretKey}` },
      };
}

export function buildCall(
  adapter: Adapter,
  baseUrl: string | null,
  secretKey: string,
  extraHeaders: Record<string, string>,
  req: ChatRequest,
): HttpCall {
  const to = target({ adapter, baseURL: baseUrl, secretKey, extraHeaders });
  if (adapter === 'anthropic') {
    return {
      ...to,
      body: {
        model: req.model,
        max_tokens: req.maxTokens,
        temperature: 0,
        system: req.system,
        messages: [{ role: 'user', content: req.user }],
        tools: [{ name: 'judgment', description: 'Record the judgment.', input_schema: req.schema }],
        tool_choice: { type: 'tool', name: 'judgment' },
      },
    };
  }
  return {
    ...to,
    body: {
      model: req.model,
      temperature: 0,
      seed: 1,
      max_tokens: req.maxTokens,
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: req.user },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'judgment', strict: true, schema: req.schema },
      },
    },
  };
}

export type ChatAnswer = { ok: true; value: unknown } | { ok: false; reason: string; retryable: boolean };

/** Reads the provider's answer: the structured value, or why there is none (and whether to retry). */
export function readAnswer(adapter: Adapter, status: number, body: unknown, text: string): ChatAnswer {
  if (status === 429 || status >= 500)
    return { ok: false, reason: `provider answered ${status}: ${text.slice(0, 200)}`, retryable: true };
  if (status < 200 || status >= 300)
    return { ok: false, reason: `provider answered ${status}: ${text.slice(0, 200)}`, retryable: false };
  const b = body as Record<string, unknown> | undefined;
  if (adapter === 'anthropic') {
    const content = Array.isArray(b?.['content']) ? (b['content'] as Record<string, unknown>[]) : [];
    const tool = content.find((c) => c['type'] === 'tool_use');
    if (!tool)
      return { ok: false, reason: 'provider answered without the judgment tool call', retryable: true };
    return { ok: true, value: tool['input'] };
  }
  const choice = (b?.['choices'] as Record<string, unknown>[] | undefined)?.[0];
  const message = choice?.['message'] as Record<string, unknown> | undefined;
  const content = message?.['content'];
  if (typeof content !== 'string')
    return { ok: false, reason: 'provider answered without content', retryable: true };
  try {
    return { ok: true, value: JSON.parse(content) };
  } catch {
    const cut = choice?.['finish_reason'] === 'length' ? ' (cut at max_tokens)' : '';
    return { ok: false, reason: `answer is not JSON${cut}: ${content.slice(0, 200)}`, retryable: true };
  }
}

export interface ChatMessage {
  role: string;
  content: string;
}

export interface CompletionRequest {
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  temperature: number;
}

/** A plain chat completion; Anthropic takes system messages apart from the conversation. */
export function buildCompletionCall(e: Endpoint, req: CompletionRequest): HttpCall {
  const common = { model: req.model, max_tokens: req.maxTokens, temperature: req.temperature };
  if (e.adapter !== 'anthropic') return { ...target(e), body: { ...common, messages: req.messages } };
  const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content);
  return {
    ...target(e),
    body: {
      ...common,
      ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
      messages: req.messages.filter((m) => m.role !== 'system'),
    },
  };
}

/** Token counts as either provider reports them. */
export function usageOf(body: unknown): { input?: number; output?: number } {
  const u = (body as { usage?: Record<string, unknown> } | undefined)?.usage;
  const n = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const input = n(u?.['prompt_tokens']) ?? n(u?.['input_tokens']);
  const output = n(u?.['completion_tokens']) ?? n(u?.['output_tokens']);
  return { ...(input === undefined ? {} : { input }), ...(output === undefined ? {} : { output }) };
}

export type Completion =
  | { ok: true; text: string; usage: { input?: number; output?: number } }
  | { ok: false; reason: string };

/** Reads a completion: its text and usage, or why there is none. */
export function readCompletion(adapter: Adapter, status: number, body: unknown, text: string): Completion {
  if (status < 200 || status >= 300)
    return { ok: false, reason: `provider answered ${status}: ${text.slice(0, 200)}` };
  const b = body as Record<string, unknown> | undefined;
  if (adapter === 'anthropic') {
    const content = Array.isArray(b?.['content']) ? (b['content'] as Record<string, unknown>[]) : [];
    const parts = content.filter((c) => c['type'] === 'text').map((c) => String(c['text'] ?? ''));
    if (parts.length === 0) return { ok: false, reason: 'provider answered without text' };
    return { ok: true, text: parts.join(''), usage: usageOf(body) };
  }
  const message = (b?.['choices'] as Record<string, unknown>[] | undefined)?.[0]?.['message'] as
    | Record<string, unknown>
    | undefined;
  const content = message?.['content'];
  if (typeof content !== 'string') return { ok: false, reason: 'provider answered without content' };
  return { ok: true, text: content, usage: usageOf(body) };
}
