/**
 * The web UI's built files (server/app/ui/dist, made by `npm run build:ui`): `/assets/*` carry a
 * content hash in their names and are cached for a year as immutable (served by @fastify/static);
 * every other page path answers index.html, never cached, so a new release is picked up on the next
 * load. Both are read from the disk at each request, so a rebuild is served whole: its index.html
 * names the assets it wrote.
 */
import { readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';

const UI_DIST = resolve(import.meta.dirname, '../../ui/dist');

// Ours rather than the library's `mime` table: JavaScript as text/javascript (RFC 9239), with charset.
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
} as const;

export const uiAssetsPlugin: FastifyPluginAsync<PluginOptions & { dist?: string }> = async (app, opts) => {
  const dist = opts.dist ?? UI_DIST;
  const indexFile = join(dist, 'index.html');

  const sendIndex = async (reply: FastifyReply) => {
    reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' });
    const index = await readFile(indexFile).catch(() => undefined);
    if (!index) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The web UI is not built: run `npm run build:ui` (the API under /api/public works).');
    }
    return reply.type('text/html; charset=utf-8').send(index);
  };

  await app.register(fastifyStatic, {
    root: join(dist, 'assets'),
    prefix: '/assets/',
    decorateReply: false,
    index: false,
    maxAge: 31_536_000_000,
    immutable: true,
    setHeaders: (reply, path) =>
      reply.headers({
        ...SECURITY_HEADERS,
        'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
      }),
  });

  app.get('/*', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    // An API path is the app's not-found answer (a JSON 404, or 405 where the path has other
    // methods); every other path is a page of the single-page app.
    if (path.startsWith('/api/')) return reply.callNotFound();
    return sendIndex(reply);
  });
};
