/**
 * The provider adapters: one structured-output chat request per judgment, built and read here
 * (pure), sent by guarded-http.ts. `openai` speaks Chat Completions with
 * `response_format: json_schema` to any OpenAI-compatible base URL; `anthropic` speaks Messages
 * with one forced tool whose input schema is the answer's.
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

export function buildCall(
  adapter: Adapter,
  baseUrl: string | null,
  secretKey: string,
  extraHeaders: Record<string, string>,
  req: ChatRequest,
): HttpCall {
  const base = baseUrl ?? DEFAULT_BASE_URLS[adapter];
  if (adapter === 'anthropic') {
    return {
      url: join(base, '/messages'),
      headers: { ...extraHeaders, 'x-api-key': secretKey, 'anthropic-version': '2023-06-01' },
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
    url: join(base, '/chat/completions'),
    headers: { ...extraHeaders, authorization: `Bearer ${secretKey}` },
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
