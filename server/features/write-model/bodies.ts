/**
 * Wire schemas of batch ingestion (`POST /api/public/ingestion`) and of the legacy write
 * endpoints, as the reference SDKs send them (research notes §4): the trace, observation and score
 * bodies every write path turns its input into, and which the rows (records.ts) apply.
 */
import { z } from 'zod';
import { describeIssueList } from '../../kernel/errors.ts';
import { TIMESTAMP_RANGE, timestampInRange } from '../../kernel/iso-datetime.ts';
import { COST_LIMIT_USD, MAX_EVENTS_PER_BATCH, MAX_TOKEN_COUNT } from './limits.ts';

/** Observation kinds stored in `events_full.type`. */
export const OBSERVATION_TYPES = [
  'SPAN',
  'GENERATION',
  'EVENT',
  'AGENT',
  'TOOL',
  'CHAIN',
  'RETRIEVER',
  'EVALUATOR',
  'EMBEDDING',
  'GUARDRAIL',
] as const;
export type ObservationType = (typeof OBSERVATION_TYPES)[number];

const json = z.unknown();
const isoDate = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 date-time')
  .refine((s) => Number.isNaN(Date.parse(s)) || timestampInRange(Date.parse(s)), {
    message: `must be within ${TIMESTAMP_RANGE}`,
  });
const optString = z.string().nullish();
const metadata = json.nullish();
const environment = z
  .string()
  .max(40)
  .regex(/^(?!langfuse)[a-z0-9-_]+$/i, 'environment must match [a-z0-9-_] and not start with "langfuse"')
  .nullish();
const level = z.enum(['DEBUG', 'DEFAULT', 'WARNING', 'ERROR']).nullish();

export const traceBody = z.object({
  id: optString,
  timestamp: isoDate.nullish(),
  name: z.string().max(1000).nullish(),
  externalId: optString,
  input: json.nullish(),
  output: json.nullish(),
  sessionId: optString,
  userId: optString,
  environment,
  metadata,
  release: optString,
  version: optString,
  public: z.boolean().nullish(),
  tags: z.array(z.string()).nullish(),
});
export type TraceBody = z.infer<typeof traceBody>;

const observationBase = {
  id: z.string().min(1),
  traceId: optString,
  environment,
  name: optString,
  startTime: isoDate.nullish(),
  metadata,
  input: json.nullish(),
  output: json.nullish(),
  level,
  statusMessage: optString,
  parentObservationId: optString,
  version: optString,
};

export const eventBody = z.object(observationBase);
export const spanBody = z.object({ ...observationBase, endTime: isoDate.nullish() });

/** What the store's columns hold: UInt64 counts read as JS numbers, Decimal(18, 12) costs. */
const tokenCount = z.number().nonnegative().max(MAX_TOKEN_COUNT);
const costUsd = z.number().nonnegative().lt(COST_LIMIT_USD);
const usageNumber = tokenCount.nullish();
const usageFields = {
  input: usageNumber,
  output: usageNumber,
  total: usageNumber,
  unit: z.string().nullish(),
  inputCost: costUsd.nullish(),
  outputCost: costUsd.nullish(),
  totalCost: costUsd.nullish(),
  promptTokens: usageNumber,
  completionTokens: usageNumber,
  totalTokens: usageNumber,
};
const USAGE_FIELDS = new Set(Object.keys(usageFields));

/** Every number in `value` with its path below `path` (JSON bodies are depth-limited before parsing). */
function numbersIn(value: unknown, path: (string | number)[]): [(string | number)[], number][] {
  if (typeof value === 'number') return [[path, value]];
  if (typeof value !== 'object' || value === null) return [];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return entries.flatMap(([k, v]) => numbersIn(v, [...path, k]));
}

/**
 * Either form the SDKs send (Langfuse's or OpenAI's names) in one object, so a refusal names its
 * field. Other keys (OpenAI's own, `prompt_tokens_details.cached_tokens`, ...) are not stored, but a
 * negative count among them is refused like a named one rather than dropped without a word.
 */
export const usage = z
  .looseObject(usageFields)
  .superRefine((u, ctx) => {
    for (const [k, v] of Object.entries(u)) {
      if (USAGE_FIELDS.has(k)) continue;
      for (const [path, n] of numbersIn(v, [k])) {
        if (n < 0) ctx.addIssue({ code: 'custom', message: 'must be a non-negative number', path });
      }
    }
  })
  .transform((u) => {
    const known: Partial<Record<keyof typeof usageFields, unknown>> = {};
    for (const k of USAGE_FIELDS) if (Object.hasOwn(u, k)) known[k as keyof typeof usageFields] = u[k];
    return known as z.infer<z.ZodObject<typeof usageFields>>;
  });

const modelParam = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.string()),
  z.record(z.string(), z.string()),
  z.null(),
]);

export const generationBody = z
  .object({
    ...observationBase,
    endTime: isoDate.nullish(),
    completionStartTime: isoDate.nullish(),
    model: optString,
    modelParameters: z.record(z.string(), modelParam).nullish(),
    usage: usage.nullish(),
    // Raw counts, or OpenAI usage objects with nested detail objects.
    usageDetails: z
      .record(z.string(), z.union([tokenCount, z.record(z.string(), tokenCount.nullish()), z.null()]))
      .nullish(),
    costDetails: z.record(z.string(), costUsd).nullish(),
    promptName: optString,
    promptVersion: z.number().int().nullish(),
  })
  .refine((b) => (b.promptName == null) === (b.promptVersion == null), {
    message: 'promptName and promptVersion must be given together',
    path: ['promptName'],
  });
export type GenerationBody = z.infer<typeof generationBody>;

export const scoreBody = z
  .object({
    id: optString,
    name: z.string().min(1),
    traceId: optString,
    sessionId: optString,
    datasetRunId: optString,
    observationId: optString,
    environment,
    comment: optString,
    metadata,
    source: z.enum(['API', 'EVAL', 'ANNOTATION']).nullish(),
    executionTraceId: optString,
    queueId: optString,
    configId: optString,
    value: z.union([z.number(), z.string()]),
    dataType: z.enum(['NUMERIC', 'CATEGORICAL', 'BOOLEAN', 'CORRECTION', 'TEXT']).nullish(),
  })
  .superRefine((b, ctx) => {
    const numeric = typeof b.value === 'number';
    const bad = (message: string) => ctx.addIssue({ code: 'custom', message, path: ['value'] });
    if (b.dataType === 'NUMERIC' && !numeric) bad('NUMERIC scores need a number value');
    if ((b.dataType === 'CATEGORICAL' || b.dataType === 'TEXT' || b.dataType === 'CORRECTION') && numeric) {
      bad(`${b.dataType} scores need a string value`);
    }
    if (b.dataType === 'BOOLEAN' && b.value !== 0 && b.value !== 1)
      bad('BOOLEAN scores need the value 0 or 1');
    if (!b.traceId && !b.sessionId && !b.datasetRunId) {
      ctx.addIssue({
        code: 'custom',
        message: 'one of traceId, sessionId, datasetRunId is required',
        path: ['traceId'],
      });
    }
  });
export type ScoreBody = z.infer<typeof scoreBody>;

export const sdkLogBody = z.object({ log: json, id: optString });

/** Observation event types and the observation type each creates. */
export const OBSERVATION_CREATE_TYPES = {
  'span-create': 'SPAN',
  'generation-create': 'GENERATION',
  'event-create': 'EVENT',
  'agent-create': 'AGENT',
  'tool-create': 'TOOL',
  'chain-create': 'CHAIN',
  'retriever-create': 'RETRIEVER',
  'evaluator-create': 'EVALUATOR',
  'embedding-create': 'EMBEDDING',
  'guardrail-create': 'GUARDRAIL',
} as const;
export const OBSERVATION_UPDATE_TYPES = { 'span-update': 'SPAN', 'generation-update': 'GENERATION' } as const;

const observationTypeEnum = z.enum(OBSERVATION_TYPES);

const legacyObservationBody = z.object({
  ...observationBase,
  type: observationTypeEnum,
  endTime: isoDate.nullish(),
  completionStartTime: isoDate.nullish(),
  model: optString,
  modelParameters: z.record(z.string(), modelParam).nullish(),
  usage: usage.nullish(),
});

const envelope = {
  id: z
    .string()
    .min(1)
    .max(800)
    .refine((s) => !s.includes('\r'), 'must not contain carriage returns'),
  timestamp: isoDate,
  metadata: json.nullish(),
};

const ev = <T extends string, B extends z.ZodType>(type: T, body: B) =>
  z.object({ ...envelope, type: z.literal(type), body });

export const ingestionEvent = z.discriminatedUnion('type', [
  ev('trace-create', traceBody),
  ev('span-create', spanBody),
  ev('span-update', spanBody),
  ev('generation-create', generationBody),
  ev('generation-update', generationBody),
  ev('event-create', eventBody),
  ev('agent-create', generationBody),
  ev('tool-create', generationBody),
  ev('chain-create', generationBody),
  ev('retriever-create', generationBody),
  ev('evaluator-create', generationBody),
  ev('embedding-create', generationBody),
  ev('guardrail-create', generationBody),
  ev('observation-create', legacyObservationBody),
  ev('observation-update', legacyObservationBody),
  ev('score-create', scoreBody),
  ev('sdk-log', sdkLogBody),
]);
export type IngestionEvent = z.infer<typeof ingestionEvent>;

export const batchRequest = z.object({
  batch: z.array(z.unknown()).max(MAX_EVENTS_PER_BATCH, `at most ${MAX_EVENTS_PER_BATCH} events per batch`),
  metadata: json.nullish(),
});

/** A zod error as field paths and messages: `body.value: NUMERIC scores need a number value`. */
export function describeIssues(error: z.ZodError): string {
  return describeIssueList(error.issues);
}
