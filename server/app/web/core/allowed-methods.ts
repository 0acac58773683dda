/**
 * An undeclared method on a served API path answers 405 with `Allow`, as the reference does,
 * instead of 404: a second router (Fastify's own, find-my-way) holds the path and method of every
 * API route as routes register, and the not-found handler asks it which methods the path has.
 */
import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Call on the root instance before registering routes; returns the lookup. */
export function collectAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const router = FindMyWay();
  const seen = new Set<string>();
  app.addHook('onRoute', (route) => {
    // The UI's page fallback (`/*`) is not an API path.
    if (!route.url.startsWith('/api/')) return;
    for (const method of [route.method].flat().map((m) => m.toUpperCase() as HTTPMethod)) {
      const key = `${method} ${route.url}`;
      if (seen.has(key)) continue;
      seen.add(key);
      router.on(method, route.url, () => {});
    }
  });
  return (path) => METHODS.filter((m) => router.find(m, path) !== null);
}
