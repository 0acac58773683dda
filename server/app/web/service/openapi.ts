/**
 * `GET /api/public/openapi.json`: OpenAPI 3.1 generated from the zod schemas the read routes
 * validate with (zod 4's `z.toJSONSchema`), so the document and the behaviour share one source.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { type AnySpec, route } from '../../../platform/http/route.ts';
import { SERVICE_VERSION } from '../../../platform/http/version.ts';
import type { WebContext } from '../core/context.ts';

const toSchema = (s: z.ZodType) =>
  z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<
    string,
    unknown
  >;

/** `/a/:b` -> `/a/{b}`. */
const openapiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

function parameters(schema: z.ZodType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const json = toSchema(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

export function buildOpenApi(specs: readonly AnySpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...specs].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method));
  for (const r of sorted) {
    const path = openapiPath(r.url);
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(r.body) } } } }
        : {}),
      responses: {
        '200': {
          description: 'OK',
          ...(r.response ? { content: { 'application/json': { schema: toSchema(r.response) } } } : {}),
        },
        '400': { description: 'Invalid request' },
        '401': { description: 'Missing or invalid API key' },
        '404': { description: 'Not found, or not served in this write mode' },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Observatory public API', version: SERVICE_VERSION },
    components: { securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' } } },
    security: [{ basicAuth: [] }],
    paths,
  };
}

export const openapiPlugin: FastifyPluginAsync<PluginOptions<WebContext>> = async (app) => {
  route(
    app,
    { method: 'GET', url: '/api/public/openapi.json', tag: 'Meta', summary: 'This document' },
    async ({ req }) => buildOpenApi(req.server.routeSpecs),
  );
};
