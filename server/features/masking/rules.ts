/**
 * Masking rules as the API takes and shows them: a built-in detector, or a custom RE2 pattern,
 * with an optional replacement; `datasetItems` also masks dataset items the project creates.
 */
import { z } from 'zod';
import { PatternError } from '../models/patterns.ts';
import { DETECTORS } from './detectors.ts';
import { compileCustom } from './masker.ts';

export interface MaskingRule {
  id: string;
  projectId: string;
  name: string;
  detector: (typeof DETECTORS)[number] | 'custom';
  pattern: string | null;
  replacement: string | null;
  enabled: boolean;
  datasetItems: boolean;
  createdAt: string;
  updatedAt: string;
}

const name = z.string().trim().min(1).max(100);
const detector = z.enum([...DETECTORS, 'custom']);
/** Shown in stored text in place of a match: short, and never able to end a JSON string. */
const replacement = z
  .string()
  .max(100)
  .refine((s) => !/["\\\p{Cc}]/u.test(s), 'must not contain quotes, backslashes or control characters');
const pattern = z.string().superRefine((p, ctx) => {
  try {
    compileCustom(p);
  } catch (err) {
    if (!(err instanceof PatternError)) throw err;
    ctx.addIssue({ code: 'custom', message: `pattern ${err.message}` });
  }
});

/** A custom rule has a pattern; a built-in one has none. */
const patternFitsDetector = (r: { detector?: string | undefined; pattern?: string | null | undefined }) =>
  r.detector === undefined || (r.detector === 'custom') === (r.pattern != null);
const patternRule = {
  message: 'pattern is required for a custom rule and not allowed for a built-in detector',
  path: ['pattern'],
};

export const createMaskingRuleRequest = z
  .strictObject({
    name,
    detector,
    pattern: pattern.nullish(),
    replacement: replacement.nullish(),
    enabled: z.boolean().default(true),
    datasetItems: z.boolean().default(false),
  })
  .refine(patternFitsDetector, patternRule);
export type CreateMaskingRuleRequest = z.infer<typeof createMaskingRuleRequest>;

export const updateMaskingRuleRequest = z.strictObject({
  name: name.optional(),
  pattern: pattern.optional(),
  replacement: replacement.nullish(),
  enabled: z.boolean().optional(),
  datasetItems: z.boolean().optional(),
});
export type UpdateMaskingRuleRequest = z.infer<typeof updateMaskingRuleRequest>;

/** A dry run of the given rules (or the project's) over its most recent observations. */
export const previewRequest = z.strictObject({
  rules: z
    .array(
      z
        .strictObject({ detector, pattern: pattern.nullish(), replacement: replacement.nullish() })
        .refine(patternFitsDetector, patternRule),
    )
    .max(50)
    .optional(),
  limit: z.number().int().min(1).max(500).default(100),
});
