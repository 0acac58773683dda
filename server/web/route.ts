/**
 * Read routes are declared with zod schemas for their path, query and body. One declaration both
 * validates requests (400 with the failing fields) and feeds `/api/public/openapi.json`, so the
 * document cannot drift from what the routes accept.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { describeIssues } from '../ingestion/schemas.ts';
import { BadRequest } from '../reads/sql.ts';

export type Method = 'GET' | 'POST' | 'DELETE';

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  url: string;
  summary: string;
  tag: string;
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

type AnySpec = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

/** Every declared route by `METHOD url`; re-registration (a second app in one process) replaces. */
const ROUTES = new Map<string, AnySpec>();

export function declaredRoutes(): AnySpec[] {
  return [...ROUTES.values()].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method));
}

const EMPTY = z.object({});

export function route<
  P extends z.ZodType = typeof EMPTY,
  Q extends z.ZodType = typeof EMPTY,
  B extends z.ZodType = z.ZodUnknown,
>(
  app: FastifyInstance,
  spec: RouteSpec<P, Q, B>,
  handler: (input: Parsed<P, Q, B>) => Promise<unknown>,
): void {
  ROUTES.set(`${spec.method} ${spec.url}`, spec as unknown as AnySpec);
  app.route({
    method: spec.method,
    url: spec.url,
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
        if (!parsed.success) {
          return reply
            .code(400)
            .send({ message: 'Invalid request data', error: describeIssues(parsed.error) });
        }
        parts[key] = parsed.data;
      }
      try {
        const result = await handler({ ...(parts as Omit<Parsed<P, Q, B>, 'req' | 'reply'>), req, reply });
        return reply.sent ? reply : result;
      } catch (err) {
        if (err instanceof BadRequest) return reply.code(400).send({ message: err.message });
        throw err;
      }
    },
  });
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
  datetime: () => z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 datetime'),
};
