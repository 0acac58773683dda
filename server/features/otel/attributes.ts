import type { OtlpAnyValue } from './otlp-types.ts';

/** An attribute value as plain JavaScript (kvlists become objects, arrays arrays). */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };

/** Attributes of one resource, scope, span or span event, keyed by name. */
export type Attributes = Readonly<Record<string, AttrValue>>;

/** Attribute names written by the Langfuse SDKs (and documented for other OTel producers); kept verbatim. */
export const LF = {
  TRACE_NAME: 'langfuse.trace.name',
  TRACE_TAGS: 'langfuse.trace.tags',
  TRACE_PUBLIC: 'langfuse.trace.public',
  TRACE_METADATA: 'langfuse.trace.metadata',
  TRACE_INPUT: 'langfuse.trace.input',
  TRACE_OUTPUT: 'langfuse.trace.output',
  OBSERVATION_TYPE: 'langfuse.observation.type',
  OBSERVATION_METADATA: 'langfuse.observation.metadata',
  OBSERVATION_LEVEL: 'langfuse.observation.level',
  OBSERVATION_STATUS_MESSAGE: 'langfuse.observation.status_message',
  OBSERVATION_INPUT: 'langfuse.observation.input',
  OBSERVATION_OUTPUT: 'langfuse.observation.output',
  OBSERVATION_COMPLETION_START_TIME: 'langfuse.observation.completion_start_time',
  OBSERVATION_MODEL: 'langfuse.observation.model.name',
  OBSERVATION_MODEL_PARAMETERS: 'langfuse.observation.model.parameters',
  OBSERVATION_USAGE_DETAILS: 'langfuse.observation.usage_details',
  OBSERVATION_COST_DETAILS: 'langfuse.observation.cost_details',
  OBSERVATION_PROMPT_NAME: 'langfuse.observation.prompt.name',
  OBSERVATION_PROMPT_VERSION: 'langfuse.observation.prompt.version',
  ENVIRONMENT: 'langfuse.environment',
  RELEASE: 'langfuse.release',
  VERSION: 'langfuse.version',
  AS_ROOT: 'langfuse.internal.as_root',
  IS_APP_ROOT: 'langfuse.internal.is_app_root',
  USER_ID: 'langfuse.user.id',
  SESSION_ID: 'langfuse.session.id',
  EXPERIMENT_ID: 'langfuse.experiment.id',
  EXPERIMENT_NAME: 'langfuse.experiment.name',
  EXPERIMENT_METADATA: 'langfuse.experiment.metadata',
  EXPERIMENT_DESCRIPTION: 'langfuse.experiment.description',
  EXPERIMENT_DATASET_ID: 'langfuse.experiment.dataset.id',
  EXPERIMENT_ITEM_ID: 'langfuse.experiment.item.id',
  EXPERIMENT_ITEM_VERSION: 'langfuse.experiment.item.version',
  EXPERIMENT_ITEM_METADATA: 'langfuse.experiment.item.metadata',
  EXPERIMENT_ITEM_ROOT_OBSERVATION_ID: 'langfuse.experiment.item.root_observation_id',
  EXPERIMENT_ITEM_EXPECTED_OUTPUT: 'langfuse.experiment.item.expected_output',
} as const;

/** Scope name prefix of the Langfuse SDKs; their spans carry no foreign attributes worth keeping as metadata. */
export const LANGFUSE_SDK_SCOPE_PREFIX = 'langfuse-sdk';

/** Vercel AI SDK instrumentation scope. */
export const VERCEL_AI_SCOPE = 'ai';
/** The Vercel AI SDK's input attributes, the first present wins. */
export const VERCEL_INPUT_KEYS = ['ai.prompt.messages', 'ai.prompt', 'ai.toolCall.args'];
/**
 * Its output attributes, the first present wins, after `ai.response.text` (with its tool calls when
 * both are sent); `ai.result.*` are the names used before AI SDK 4.
 */
export const VERCEL_OUTPUT_KEYS = [
  'ai.result.text',
  'ai.toolCall.result',
  'ai.response.object',
  'ai.result.object',
  'ai.response.toolCalls',
  'ai.result.toolCalls',
];

/**
 * Converts one OTLP AnyValue. int64 becomes a number when it is exactly representable, else stays a decimal
 * string; bytes stay base64; an empty value is null. Defensive about shape, since stored exports are re-read.
 */
export function anyValueToJs(value: OtlpAnyValue | undefined | null): AttrValue {
  if (typeof value !== 'object' || value === null) return null;
  if (typeof value.stringValue === 'string') return value.stringValue;
  if (typeof value.boolValue === 'boolean') return value.boolValue;
  if (value.intValue !== undefined && value.intValue !== null) {
    const n = Number(value.intValue);
    return Number.isSafeInteger(n) ? n : String(value.intValue);
  }
  if ('doubleValue' in value) return typeof value.doubleValue === 'number' ? value.doubleValue : null;
  if (value.arrayValue) return arrayOf(value.arrayValue.values).map((v) => anyValueToJs(v as OtlpAnyValue));
  if (value.kvlistValue) return toAttributes(value.kvlistValue.values);
  if (typeof value.bytesValue === 'string') return value.bytesValue;
  return null;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Key/value list → record; a repeated key keeps its last value. fromEntries keeps `__proto__` an ordinary key. */
export function toAttributes(keyValues: unknown): Record<string, AttrValue> {
  const entries: [string, AttrValue][] = [];
  for (const kv of arrayOf(keyValues)) {
    if (typeof kv !== 'object' || kv === null) continue;
    const { key, value } = kv as { key?: unknown; value?: OtlpAnyValue };
    if (typeof key === 'string') entries.push([key, anyValueToJs(value)]);
  }
  return Object.fromEntries(entries);
}

/** Not null, not '', not an empty array or object: the reference server's notion of "set". */
export function isMeaningful(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Own attribute value (never an inherited Object.prototype member). */
export function attr(attrs: Attributes, key: string): AttrValue | undefined {
  return Object.hasOwn(attrs, key) ? attrs[key] : undefined;
}

/** The first of `keys` with a meaningful value. */
export function firstMeaningful(attrs: Attributes, keys: readonly string[]): AttrValue | undefined {
  for (const key of keys) {
    const value = attr(attrs, key);
    if (isMeaningful(value)) return value;
  }
  return undefined;
}

/** Strings as they are; everything else as JSON (the form stored in String columns). */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

/** Text of the first meaningful attribute among `keys`, or null. */
export function firstText(attrs: Attributes, keys: readonly string[]): string | null {
  const value = firstMeaningful(attrs, keys);
  return value === undefined ? null : asText(value);
}

/** JSON.parse for strings that hold JSON; non-strings are returned as they are; undefined when unparsable. */
export function parseJsonish(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `true` or `"true"` (any case) — how SDKs spell booleans in attributes. */
export function isTrue(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}

/** Top-level keys → string values (objects and numbers JSON-encoded), the shape of the metadata columns. */
export function toStringRecord(obj: Record<string, unknown>): Record<string, string> {
  const entries: [string, string][] = [];
  for (const [key, value] of Object.entries(obj)) {
    if (value !== undefined) entries.push([key, asText(value)]);
  }
  return Object.fromEntries(entries);
}
