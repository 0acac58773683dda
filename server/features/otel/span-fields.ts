import { TIMESTAMP_RANGE, timestampInRange } from '../../kernel/iso-datetime.ts';
import {
  type Attributes,
  asText,
  attr,
  firstText,
  isMeaningful,
  isPlainObject,
  LF,
  parseJsonish,
} from './attributes.ts';
import { OtlpValidationError } from './errors.ts';
import { isoToMicros, microsToIso } from './time.ts';
import type { ObservationLevel } from './types.ts';

/** Observation name: tool and framework naming attributes take precedence over the (often generic) span name. */
export function extractName(spanName: string, attrs: Attributes): string {
  const named = firstText(attrs, ['gen_ai.tool.name', 'genkit:name', 'logfire.msg']);
  if (named !== null) return named;
  const toolCall = attr(attrs, 'ai.toolCall.name');
  if (toolCall !== undefined && toolCall !== null) return asText(toolCall);
  const operationId = attr(attrs, 'ai.operationId');
  if (operationId !== undefined && operationId !== null) {
    const functionId = attr(attrs, 'ai.telemetry.functionId');
    return `${isMeaningful(functionId) ? `${asText(functionId)}:` : ''}${asText(operationId)}`;
  }
  return spanName;
}

const ENVIRONMENT_KEYS = [LF.ENVIRONMENT, 'deployment.environment.name', 'deployment.environment'];
const ENVIRONMENT_PATTERN = /^[a-z0-9_-]{1,40}$/;

/**
 * Environment: for each key in order, the span's value, then the resource's. Lowercased, a leading
 * `langfuse-`/`langfuse_` (reserved prefix) stripped; anything not `[a-z0-9-_]{1,40}` becomes "default".
 */
export function extractEnvironment(attrs: Attributes, resourceAttrs: Attributes): string {
  for (const key of ENVIRONMENT_KEYS) {
    for (const source of [attrs, resourceAttrs]) {
      const value = attr(source, key);
      if (isMeaningful(value)) return normalizeEnvironment(asText(value));
    }
  }
  return 'default';
}

export function normalizeEnvironment(value: string): string {
  const env = value
    .trim()
    .toLowerCase()
    .replace(/^langfuse[-_]/, '');
  return ENVIRONMENT_PATTERN.test(env) ? env : 'default';
}

/** Level spellings of common logging libraries mapped onto the four observation levels. */
const LEVEL_ALIASES: Record<string, ObservationLevel> = {
  DEBUG: 'DEBUG',
  TRACE: 'DEBUG',
  VERBOSE: 'DEBUG',
  DEFAULT: 'DEFAULT',
  INFO: 'DEFAULT',
  INFORMATION: 'DEFAULT',
  NOTICE: 'DEFAULT',
  LOG: 'DEFAULT',
  OK: 'DEFAULT',
  WARN: 'WARNING',
  WARNING: 'WARNING',
  ERROR: 'ERROR',
  ERR: 'ERROR',
  FATAL: 'ERROR',
  CRITICAL: 'ERROR',
};

/** LiveKit Agents' internal pipeline spans, shown at DEBUG so they do not drown the conversation. */
const LIVEKIT_DEBUG_SPANS = new Set([
  'user_speaking',
  'eou_detection',
  'llm_request_run',
  'tts_node',
  'tts_request',
  'tts_request_run',
  'tts_stream_adapter',
  'agent_speaking',
  'drain_agent_activity',
  'on_exit',
  'on_enter',
  'llm_fallback_adapter',
  'tts_fallback_adapter',
  'start_agent_activity',
]);

/** Explicit level (alias-normalized) wins; otherwise an error status means ERROR. Unknown spellings are ignored. */
export function extractLevel(
  attrs: Attributes,
  statusCode: number,
  scopeName: string,
  spanName: string,
): ObservationLevel {
  const explicit = attr(attrs, LF.OBSERVATION_LEVEL);
  if (typeof explicit === 'string') {
    const key = explicit.trim().toUpperCase();
    if (Object.hasOwn(LEVEL_ALIASES, key)) return LEVEL_ALIASES[key]!;
  }
  if (statusCode === 2) return 'ERROR';
  if (scopeName === 'livekit-agents' && LIVEKIT_DEBUG_SPANS.has(spanName)) return 'DEBUG';
  return 'DEFAULT';
}

export function extractStatusMessage(attrs: Attributes, statusMessage: string): string | null {
  return firstText(attrs, [LF.OBSERVATION_STATUS_MESSAGE]) ?? (statusMessage === '' ? null : statusMessage);
}

/** Delays to the first streamed chunk, first present wins, with their unit in microseconds. */
const TIME_TO_FIRST_CHUNK: readonly (readonly [string, number])[] = [
  ['ai.response.msToFirstChunk', 1000],
  ['ai.stream.msToFirstChunk', 1000],
  ['gen_ai.response.time_to_first_chunk', 1_000_000],
];

/**
 * First-token time: the Langfuse attribute (ISO, or the JSON-encoded ISO string older SDKs send), else the
 * Vercel AI SDK's milliseconds-to-first-chunk, else the GenAI convention's seconds-to-first-chunk, each
 * added to the span start (the conventions measure from the request, which the span start stands for).
 */
export function extractCompletionStartTime(attrs: Attributes, startMicros: bigint): string | null {
  const value = attr(attrs, LF.OBSERVATION_COMPLETION_START_TIME);
  if (typeof value === 'string') {
    const micros = isoToMicros(value) ?? unwrapped(value);
    if (micros !== null) return storedTime(micros, LF.OBSERVATION_COMPLETION_START_TIME, value);
  }
  const sent = TIME_TO_FIRST_CHUNK.find(([key]) => attr(attrs, key) !== undefined);
  if (sent === undefined) return null;
  const [key, microsPerUnit] = sent;
  const delay = Number(attr(attrs, key));
  if (!Number.isFinite(delay) || delay <= 0) return null;
  return storedTime(startMicros + BigInt(Math.round(delay * microsPerUnit)), key, delay);
}

/** The JSON-encoded ISO string older SDKs send. */
function unwrapped(value: string): bigint | null {
  const decoded = parseJsonish(value);
  return typeof decoded === 'string' ? isoToMicros(decoded) : null;
}

/** A time the analytics store keeps as sent, or a refusal naming the attribute it came from. */
function storedTime(micros: bigint, field: string, value: unknown): string {
  if (timestampInRange(Number(micros / 1000n))) return microsToIso(micros);
  throw new OtlpValidationError(
    'export',
    `${field} is ${String(value)}: outside the accepted time range ${TIMESTAMP_RANGE}`,
    field,
  );
}

/** Linked prompt: Langfuse attributes, legacy names, or the Vercel AI SDK `langfusePrompt` metadata object. */
export function extractPrompt(attrs: Attributes): { name: string | null; version: number | null } {
  const vercel = parseJsonish(attr(attrs, 'ai.telemetry.metadata.langfusePrompt'));
  const fromVercel = isPlainObject(vercel) ? vercel : {};
  const name =
    firstText(attrs, [LF.OBSERVATION_PROMPT_NAME, 'langfuse.prompt.name']) ??
    (isMeaningful(fromVercel.name) ? asText(fromVercel.name) : null);
  const rawVersion =
    [
      attr(attrs, LF.OBSERVATION_PROMPT_VERSION),
      attr(attrs, 'langfuse.prompt.version'),
      fromVercel.version,
    ].find(isMeaningful) ?? null;
  const version = Number(rawVersion);
  // prompt_version is UInt16; anything else cannot be a prompt version.
  const validVersion = rawVersion !== null && Number.isInteger(version) && version >= 0 && version <= 65535;
  return { name, version: validVersion ? version : null };
}
