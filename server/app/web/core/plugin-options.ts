/**
 * The shape every API family plugin takes: `export const <family>Plugin:
 * FastifyPluginAsync<PluginOptions>` in `server/app/web/<feature>/public.ts` or `ui.ts`, registered from app.ts
 * inside the authenticated scope with `api.register(<family>Plugin, { ctx })`.
 */
import type { WebContext } from './context.ts';

export interface PluginOptions {
  ctx: WebContext;
}
