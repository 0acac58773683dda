/**
 * Routes are declared with zod schemas for their path, query and body. One declaration both
 * validates requests (400 naming the failing fields) and feeds `/api/public/openapi.json`: the
 * spec travels in the route's config and `collectRouteSpecs` gathers it as routes register, so
 * the document cannot drift from what the registered routes accept.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { InvalidRequestPart, type ValidationIssue } from '../../kernel/errors.ts';
import { isoDateTime } from '../../kernel/iso-datetime.ts';
import type { Role } from '../../kernel/roles.ts';
import type { Gate } from './gates.ts';

/** The least project role a route needs, and what a user below it is told. */
export interface RoleNeed {
  atLeast: Role;
  refusal: string;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  url: string;
  summary: string;
  tag: string;
  /** Which deployments serve the route (gates.ts); checked by the family plugin's hook. */
  gate?: Gate;
  /** The least project role a UI route needs; checked by its project scope's hook (server/app/web/ui-shell/scope.ts). */
  role?: RoleNeed;
  params?: P;
  query?: Q;
  body?: B;
  /** Documented success response (status 200). */
  response?: z.ZodType;
}

export interface Parsed<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
  req: FastifyRequest;
  reply: FastifyReply;
}

export type AnySpec = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The declaration of a route made with `route()`, for the OpenAPI document. */
    openapi?: AnySpec;
    role?: RoleNeed;
  }
  interface FastifyInstance {
    /** Every public route declared with `route()` in this app, in registration order. */
    routeSpecs: AnySpec[];
  }
}

/** Call on the root instance before registering routes: collects every `route()` declaration. */
export function collectRouteSpecs(app: FastifyInstance): void {
  const specs: AnySpec[] = [];
  app.decorate('routeSpecs', specs);
  app.addHook('onRoute', (options) => {
    const spec = options.config?.openapi;
    // The web UI's internal routes (`/api/ui`) are not part of the public API's document.
    if (spec?.url.startsWith('/api/public/')) specs.push(spec);
  });
}

const EMPTY = z.object({});
export type Empty = typeof EMPTY;

export function route<
  P extends z.ZodType = Empty,
  Q extends z.ZodType = Empty,
  B extends z.ZodType = z.ZodUnknown,
>(
  app: FastifyInstance,
  spec: RouteSpec<P, Q, B>,
  handler: (input: Parsed<P, Q, B>) => Promise<unknown>,
): void {
  app.route({
    method: spec.method,
    url: spec.url,
    config: {
      openapi: spec as unknown as AnySpec,
      gate: spec.gate ?? 'always',
      ...(spec.role ? { role: spec.role } : {}),
    },
    handler: async (req, reply) => {
      const parts = {} as { params: unknown; query: unknown; body: unknown };
      for (const [key, schema, value] of [
        ['params', spec.params, req.params],
        ['query', spec.query, req.query],
        ['body', spec.body, req.body],
      ] as const) {
        if (!schema) {
          parts[key] = value;
          continue;
        }
        const parsed = schema.safeParse(value ?? {});
        if (!parsed.success) throw new InvalidRequestPart(key, parsed.error.issues.map(issueOf));
        parts[key] = parsed.data;
        const nul = pathOfNul(parts[key]);
        if (nul)
          throw new InvalidRequestPart(key, [
            { code: 'custom', message: 'must not contain a NUL character (\\u0000)', path: nul },
          ]);
      }
      const result = await handler({ ...(parts as Omit<Parsed<P, Q, B>, 'req' | 'reply'>), req, reply });
      return reply.sent ? reply : result;
    },
  });
}

/** A zod issue as the answers list it: the path without symbols (JSON has none). */
const issueOf = (i: z.core.$ZodIssue): ValidationIssue => ({
  code: i.code,
  message: i.message,
  path: i.path.filter((p): p is string | number => typeof p !== 'symbol'),
});

/**
 * The path of the first string holding U+0000 in a parsed request part, if any: PostgreSQL text and
 * jsonb cannot store it, and no name or identifier needs it.
 */
export function pathOfNul(value: unknown): (string | number)[] | undefined {
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return path;
    } else if (Array.isArray(node)) {
      for (const [i, child] of node.entries()) stack.push([child, [...path, i]]);
    } else if (typeof node === 'object' && node !== null && !Buffer.isBuffer(node)) {
      for (const [k, child] of Object.entries(node)) stack.push([child, [...path, k]]);
    }
  }
  return undefined;
}

/** Query-string helpers: everything arrives as text (or an array of text when repeated). */
export const q = {
  int: (min: number, max: number, fallback: number) =>
    z.coerce.number().int().min(min).max(max).optional().default(fallback),
  bool: () =>
    z
      .enum(['true', 'false'])
      .optional()
      .transform((v) => (v === undefined ? undefined : v === 'true')),
  /** One or more values: `a=x&a=y` or `a=x`. */
  many: () =>
    z
      .union([z.string(), z.array(z.string())])
      .optional()
      .transform((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v])),
  /** Comma-separated list. */
  csv: () =>
    z
      .string()
      .optional()
      .transform((v) =>
        v === undefined
          ? undefined
          : v
              .split(',')
              .map((s) => s.trim())
              .filter((s) => s !== ''),
      ),
  datetime: isoDateTime,
  /** `?fromTimestamp=&toTimestamp=` of a list filtered to a time window. */
  timeRange: () => ({ fromTimestamp: isoDateTime().optional(), toTimestamp: isoDateTime().optional() }),
  /** `?page=&limit=` of a paged list: page from 1, limit up to `maxLimit`. */
  page: (maxLimit: number, defaultLimit: number) => ({
    page: q.int(1, 1_000_000, 1),
    limit: q.int(1, maxLimit, defaultLimit),
  }),
};
