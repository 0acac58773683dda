/**
 * Score configurations: what a config may declare, and what a score that names one must satisfy.
 * Pure: the rules only, no I/O (the SQL lives in `config-store.ts`).
 */
import { z } from 'zod';

export const CONFIG_DATA_TYPES = ['NUMERIC', 'CATEGORICAL', 'BOOLEAN'] as const;
export type ConfigDataType = (typeof CONFIG_DATA_TYPES)[number];

export interface Category {
  value: number;
  label: string;
}

export interface ScoreConfig {
  id: string;
  projectId: string;
  name: string;
  dataType: ConfigDataType;
  isArchived: boolean;
  minValue: number | null;
  maxValue: number | null;
  categories: Category[] | null;
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Boolean configs carry these two categories; callers may not pass their own. */
export const BOOLEAN_CATEGORIES: Category[] = [
  { value: 1, label: 'True' },
  { value: 0, label: 'False' },
];

const category = z.object({ value: z.number(), label: z.string().min(1) });

const configName = z
  .string()
  .min(1)
  .max(35)
  .regex(
    /^[A-Za-z0-9_ .()-]+$/,
    'only letters, numbers, underscores, spaces, periods, parentheses and hyphens are allowed',
  );
const description = z.string().max(2000).nullish();

export const createConfigRequest = z
  .object({
    name: configName,
    dataType: z.enum(CONFIG_DATA_TYPES),
    categories: z.array(category).nullish(),
    minValue: z.number().nullish(),
    maxValue: z.number().nullish(),
    description,
  })
  .superRefine((b, ctx) => {
    const bad = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    const hasCategories = b.categories != null && b.categories.length > 0;
    if (b.dataType === 'CATEGORICAL') {
      if (!hasCategories) bad('categories', 'CATEGORICAL configs need at least one category');
      const cats = b.categories ?? [];
      if (new Set(cats.map((c) => c.label)).size !== cats.length) bad('categories', 'labels must be unique');
      if (new Set(cats.map((c) => c.value)).size !== cats.length) bad('categories', 'values must be unique');
    } else if (hasCategories) {
      bad('categories', `${b.dataType} configs take no categories`);
    }
    if (b.dataType !== 'NUMERIC') {
      if (b.minValue != null) bad('minValue', 'only NUMERIC configs have a minimum');
      if (b.maxValue != null) bad('maxValue', 'only NUMERIC configs have a maximum');
    } else if (b.minValue != null && b.maxValue != null && b.minValue > b.maxValue) {
      bad('minValue', 'minValue must not be greater than maxValue');
    }
  });
export type CreateConfigRequest = z.infer<typeof createConfigRequest>;

/** `PATCH /score-configs/{id}`: any of these, at least one; the data type stays. */
export const updateConfigRequest = z
  .object({
    isArchived: z.boolean().optional(),
    name: configName.optional(),
    minValue: z.number().nullish(),
    maxValue: z.number().nullish(),
    categories: z.array(category).nullish(),
    description,
  })
  .refine(
    (b) => Object.keys(b).length > 0,
    'Request body cannot be empty: give at least one field to update',
  );
export type UpdateConfigRequest = z.infer<typeof updateConfigRequest>;

/**
 * A config with an update applied, checked by the rules a new config meets (a NUMERIC range stays
 * ordered, CATEGORICAL labels and values stay unique, BOOLEAN keeps its two categories); the
 * issues name the fields of the update.
 */
export function applyConfigUpdate(
  current: ScoreConfig,
  update: UpdateConfigRequest,
): { config: ScoreConfig } | { issues: z.ZodError } {
  const pick = <K extends 'minValue' | 'maxValue' | 'description'>(k: K) =>
    update[k] === undefined ? current[k] : update[k];
  const merged = {
    name: update.name ?? current.name,
    dataType: current.dataType,
    minValue: pick('minValue'),
    maxValue: pick('maxValue'),
    description: pick('description'),
    categories:
      update.categories !== undefined || current.dataType !== 'BOOLEAN'
        ? (update.categories ?? current.categories)
        : null,
  };
  const checked = createConfigRequest.safeParse(merged);
  if (!checked.success) return { issues: checked.error };
  return {
    config: {
      ...current,
      ...merged,
      minValue: merged.minValue ?? null,
      maxValue: merged.maxValue ?? null,
      description: merged.description ?? null,
      categories: categoriesOf(checked.data),
      isArchived: update.isArchived ?? current.isArchived,
    },
  };
}

/** The categories stored for a new config: the caller's, or the two boolean ones. */
export function categoriesOf(req: CreateConfigRequest): Category[] | null {
  if (req.dataType === 'BOOLEAN') return BOOLEAN_CATEGORIES;
  if (req.dataType === 'CATEGORICAL') return req.categories ?? [];
  return null;
}

/** A score's value as stored: the number, the label (categorical and boolean), the data type. */
export interface ResolvedValue {
  dataType: ConfigDataType;
  value: number;
  stringValue: string | null;
}

export type ConfigCheck =
  | { ok: true; resolved: ResolvedValue }
  | { ok: false; field: string; message: string };

const fail = (field: string, message: string): ConfigCheck => ({ ok: false, field, message });

/**
 * Checks a score against the config it names. The config decides the data type; a categorical
 * score names one of the config's labels (or its value), a boolean one is 0/1 or True/False.
 */
export function checkAgainstConfig(
  score: { value: number | string; dataType?: string | null | undefined },
  config: ScoreConfig,
): ConfigCheck {
  if (config.isArchived) return fail('configId', `score config ${config.id} is archived`);
  if (score.dataType != null && score.dataType !== config.dataType) {
    return fail(
      'dataType',
      `${score.dataType} does not match the data type ${config.dataType} of score config ${config.id}`,
    );
  }
  const { value } = score;
  if (config.dataType === 'NUMERIC') {
    if (typeof value !== 'number') return fail('value', 'NUMERIC scores need a number value');
    if (config.minValue != null && value < config.minValue) {
      return fail('value', `${value} is below the minimum ${config.minValue} of score config ${config.id}`);
    }
    if (config.maxValue != null && value > config.maxValue) {
      return fail('value', `${value} is above the maximum ${config.maxValue} of score config ${config.id}`);
    }
    return { ok: true, resolved: { dataType: 'NUMERIC', value, stringValue: null } };
  }
  const categories = config.dataType === 'BOOLEAN' ? BOOLEAN_CATEGORIES : (config.categories ?? []);
  const match = categories.find((c) => (typeof value === 'number' ? c.value === value : c.label === value));
  if (!match) {
    const allowed = categories.map((c) => (typeof value === 'number' ? c.value : c.label)).join(', ');
    return fail(
      'value',
      `${JSON.stringify(value)} is not a category of score config ${config.id} (${allowed})`,
    );
  }
  return { ok: true, resolved: { dataType: config.dataType, value: match.value, stringValue: match.label } };
}
