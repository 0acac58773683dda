/**
 * Evaluator outputs: the public output definition (NUMERIC, BOOLEAN, CATEGORICAL), the JSON
 * schema the judge must answer with, and the check of an answer into a score. Enumerations and
 * integer bounds are what constrained decoders enforce; a number range is checked here. Pure.
 */
import { z } from 'zod';

const field = z.object({ description: z.string().min(1) });
export const outputDefinition = z.discriminatedUnion('dataType', [
  z.object({
    dataType: z.literal('NUMERIC'),
    reasoning: field,
    score: z.object({
      description: z.string().min(1),
      minValue: z.number().optional(),
      maxValue: z.number().optional(),
    }),
  }),
  z.object({ dataType: z.literal('BOOLEAN'), reasoning: field, score: field }),
  z.object({
    dataType: z.literal('CATEGORICAL'),
    reasoning: field,
    score: z.object({
      description: z.string().min(1),
      categories: z.array(z.string().min(1)).min(1),
      shouldAllowMultipleMatches: z.boolean(),
    }),
  }),
]);
export type OutputDefinition = z.infer<typeof outputDefinition>;

/** Why a definition cannot be used (beyond its shape), or undefined. */
export function outputProblem(d: OutputDefinition): string | undefined {
  if (d.dataType === 'NUMERIC' && d.score.minValue !== undefined && d.score.maxValue !== undefined)
    if (d.score.minValue > d.score.maxValue)
      return 'outputDefinition.score: minValue must not exceed maxValue';
  if (d.dataType === 'CATEGORICAL' && new Set(d.score.categories).size !== d.score.categories.length)
    return 'outputDefinition.score.categories: categories must be distinct';
  return undefined;
}

/** Bounded so the JSON closes before the token limit. */
export const REASONING_MAX_CHARS = 300;

export function answerSchema(d: OutputDefinition): Record<string, unknown> {
  let score: Record<string, unknown>;
  if (d.dataType === 'BOOLEAN') score = { type: 'boolean' };
  else if (d.dataType === 'CATEGORICAL')
    score = d.score.shouldAllowMultipleMatches
      ? { type: 'array', items: { enum: d.score.categories }, minItems: 1, uniqueItems: true }
      : { enum: d.score.categories };
  else score = { type: 'number' };
  return {
    type: 'object',
    additionalProperties: false,
    required: ['score', 'reasoning'],
    properties: {
      score: { ...score, description: d.score.description },
      reasoning: { type: 'string', maxLength: REASONING_MAX_CHARS, description: d.reasoning.description },
    },
  };
}

/** A judgment as stored: the score's value (number or label) and the reasoning as its comment. */
export type Judgment =
  | { ok: true; dataType: OutputDefinition['dataType']; value: number | string; reasoning: string }
  | { ok: false; reason: string };

export function checkAnswer(d: OutputDefinition, answer: unknown): Judgment {
  const a = answer as { score?: unknown; reasoning?: unknown } | null;
  if (typeof a !== 'object' || a === null) return { ok: false, reason: 'answer is not a JSON object' };
  if (typeof a.reasoning !== 'string') return { ok: false, reason: 'answer.reasoning is not a string' };
  const reasoning = a.reasoning;
  const s = a.score;
  if (d.dataType === 'BOOLEAN') {
    if (typeof s !== 'boolean')
      return { ok: false, reason: `answer.score ${JSON.stringify(s)} is not a boolean` };
    return { ok: true, dataType: 'BOOLEAN', value: s ? 1 : 0, reasoning };
  }
  if (d.dataType === 'CATEGORICAL') {
    const labels = Array.isArray(s) && d.score.shouldAllowMultipleMatches ? s : [s];
    const bad = labels.filter((l) => typeof l !== 'string' || !d.score.categories.includes(l));
    if (bad.length > 0 || labels.length === 0)
      return {
        ok: false,
        reason: `answer.score ${JSON.stringify(s)} is not one of ${d.score.categories.join(', ')}`,
      };
    return { ok: true, dataType: 'CATEGORICAL', value: (labels as string[]).join(','), reasoning };
  }
  if (typeof s !== 'number' || !Number.isFinite(s))
    return { ok: false, reason: `answer.score ${JSON.stringify(s)} is not a number` };
  const { minValue, maxValue } = d.score;
  if ((minValue !== undefined && s < minValue) || (maxValue !== undefined && s > maxValue))
    return {
      ok: false,
      reason: `answer.score ${s} is outside [${minValue ?? '-inf'}, ${maxValue ?? 'inf'}]`,
    };
  return { ok: true, dataType: 'NUMERIC', value: s, reasoning };
}
