/**
 * The zod pieces both the server and the operator build their configuration schemas from, and the
 * one line a refused configuration becomes. A variable set to blanks counts as unset. Each
 * variable's schema names its refusal after the variable: a message starting with "is not" judges
 * the value, which the line then shows (`PORT=x is not ...`); any other ("must ...", "is required")
 * names the variable alone, so secrets and credentials in URLs stay out of it.
 */
import { z } from 'zod';
import { ConfigError, ENV_DEFAULTS, ENV_LIMITS, type Env, LOG_LEVELS } from './env.ts';

/** The value as set, trimmed; blank is unset. */
const present = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** A variable's trimmed value, or undefined. */
export const text = () => z.preprocess(present, z.string().optional());

export const textOr = (fallback: string) => z.preprocess(present, z.string().default(fallback));

/** A variable taken as given, blanks and surrounding spaces included (a password); unset: empty. */
export const verbatim = () => z.string().default('');

/** A variable the process cannot start without. */
export const required = () => z.preprocess(present, z.string({ error: 'is required' }));

/** An optional variable whose value must pass `check`. */
export const checked = <T>(check: z.ZodType<T, string>) => z.preprocess(present, check.optional());

type Limits = { min: number; max: number };

/** An integer in `min`..`max`, as `Number()` reads it. */
const integer = ({ min, max }: Limits) => {
  const error = `is not an integer between ${min} and ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

export const intIn = (limits: Limits) => z.preprocess(present, integer(limits).optional());

export const intOr = (limits: Limits, fallback: number) =>
  z.preprocess(present, integer(limits).default(fallback));

/** A setting the contract gives both a default and a range. */
export const limited = (k: keyof typeof ENV_LIMITS & keyof typeof ENV_DEFAULTS) =>
  intOr(ENV_LIMITS[k], ENV_DEFAULTS[k]);

const flag = z
  .enum(['true', '1', 'false', '0'], { error: 'is not one of true|false' })
  .transform((v) => v === 'true' || v === '1');
const lowerCase = (v: unknown) => present(v)?.toLowerCase();

/** true|1 or false|0, any case. */
export const bool = (fallback: boolean) => z.preprocess(lowerCase, flag.default(fallback));

/** A boolean whose default depends on other variables. */
export const optionalBool = () => z.preprocess(lowerCase, flag.optional());

const choice = <T extends string>(allowed: readonly [T, ...T[]]) =>
  z.enum(allowed, { error: `is not one of ${allowed.join('|')}` });

/** One of `allowed`; undefined when unset. */
export const oneOf = <T extends string>(allowed: readonly [T, ...T[]]) =>
  z.preprocess(present, choice(allowed).optional());

export const oneOfOr = <T extends string>(allowed: readonly [T, ...T[]], fallback: NoInfer<T>) =>
  z.preprocess(present, choice(allowed).default(fallback));

/** LOG_LEVEL, read alike by every process. */
export const logLevel = () => oneOfOr(LOG_LEVELS, ENV_DEFAULTS.logLevel);

type Fields = Record<string, readonly [variable: string, schema: z.ZodType]>;

/**
 * Settings of one variable each, declared `key: [variable, schema]`: parsed under the variables'
 * names (so a refusal names the variable) and returned under the keys.
 */
export function fields<F extends Fields>(f: F) {
  const entries = Object.entries(f);
  return z.object(Object.fromEntries(entries.map(([, [variable, schema]]) => [variable, schema]))).transform(
    (v) =>
      Object.fromEntries(entries.map(([key, [variable]]) => [key, v[variable]])) as {
        [K in keyof F]: z.output<F[K][1]>;
      },
  );
}

/**
 * Each variable a process's schema reads with its schema, in the schema's order: the keys of every
 * object in it, through its intersections and transforms (how `fields` and the parts compose). A
 * variable read twice (a part's, and the process's requirement) is listed twice.
 */
export function variableSchemas(schema: z.core.$ZodType): [string, z.core.$ZodType][] {
  const def = schema._zod.def;
  if (def.type === 'object') return Object.entries((def as z.core.$ZodObjectDef).shape);
  const inner =
    def.type === 'pipe'
      ? [(def as z.core.$ZodPipeDef).in, (def as z.core.$ZodPipeDef).out]
      : def.type === 'intersection'
        ? [(def as z.core.$ZodIntersectionDef).left, (def as z.core.$ZodIntersectionDef).right]
        : [];
  return inner.flatMap(variableSchemas);
}

/** The variables a process's schema reads. */
export const variablesOf = (schema: z.core.$ZodType): string[] => [
  ...new Set(variableSchemas(schema).map(([name]) => name)),
];

/** The one line naming each refused variable (the first problem of each), in the schema's order. */
function describeIssues(issues: readonly z.core.$ZodIssue[], env: Env): string {
  const lines = new Map<string, string>();
  for (const issue of issues) {
    const name = issue.path[0];
    if (typeof name !== 'string') {
      // A rule over several variables: its message names them all.
      lines.set(issue.message, issue.message);
    } else if (!lines.has(name)) {
      const judged = issue.message.startsWith('is not');
      lines.set(name, judged ? `${name}=${env[name]?.trim()} ${issue.message}` : `${name} ${issue.message}`);
    }
  }
  return `invalid configuration: ${[...lines.values()].join('; ')}`;
}

/** Parses `env` with a process's schema; throws ConfigError with one line on any problem. */
export function parseEnv<T>(schema: z.ZodType<T>, env: Env): T {
  const result = schema.safeParse(env);
  if (!result.success) throw new ConfigError(describeIssues(result.error.issues, env));
  return result.data;
}
