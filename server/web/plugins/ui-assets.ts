/**
 * The web UI's built files (server/ui/dist, made by `npm run build:ui`): `/assets/*` carry a
 * content hash in their names and are cached for a year as immutable; every other page path
 * answers index.html, never cached, so a new release is picked up on the next load. Files are read
 * once at start: the bundle is small and a request never touches the disk.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { NotFound } from '../../errors.ts';
import type { PluginOptions } from './types.ts';

export const UI_DIST = resolve(import.meta.dirname, '../../ui/dist');

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

function loadAssets(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const assets = join(dir, 'assets');
  if (existsSync(assets)) for (const f of readdirSync(assets)) out.set(f, readFileSync(join(assets, f)));
  return out;
}

export const uiAssetsPlugin: FastifyPluginAsync<PluginOptions & { dist?: string }> = async (app, opts) => {
  const dist = opts.dist ?? UI_DIST;
  const indexFile = join(dist, 'index.html');
  const index = existsSync(indexFile) ? readFileSync(indexFile) : undefined;
  const assets = loadAssets(dist);

  const sendIndex = (reply: FastifyReply) => {
    reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' });
    if (!index) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The web UI is not built: run `npm run build:ui` (the API under /api/public works).');
    }
    return reply.type('text/html; charset=utf-8').send(index);
  };

  app.get<{ Params: { file: string } }>('/assets/:file', async (req, reply) => {
    const body = assets.get(req.params.file);
    if (!body) throw new NotFound(`asset ${req.params.file} not found`);
    return reply
      .headers({ ...SECURITY_HEADERS, 'cache-control': 'public, max-age=31536000, immutable' })
      .type(TYPES[extname(req.params.file)] ?? 'application/octet-stream')
      .send(body);
  });

  app.get('/*', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    // Unknown API paths stay JSON 404s; every other path is a page of the single-page app.
    if (path.startsWith('/api/')) throw new NotFound(`Route ${req.method} ${path} not found`);
    return sendIndex(reply);
  });
};
