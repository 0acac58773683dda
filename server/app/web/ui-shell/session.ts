/**
 * Sessions of the web UI. The session cookie holds a random token (HttpOnly, SameSite=Lax, Secure
 * as configured: cookies.ts); the server keeps its hash (server/features/users/store.ts). Every state change under
 * `/api/ui` is refused (403) unless its `Origin`, when sent, is this host and its `x-csrf-token`
 * header carries the CSRF token: the session's own once signed in, before that the value of a
 * second cookie (double submit), which only this origin can read back through `/api/ui/session`.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PREVIEW_OFF, readPathOf } from '../../../features/users/read-path.ts';
import { createSession, type Session, type SessionClient, sessionOf } from '../../../features/users/store.ts';
import { Forbidden, NotFound, Unauthorized } from '../../../kernel/errors.ts';
import type { WebContext } from '../core/context.ts';
import { cookieAttributes, secureFor } from './cookies.ts';

export const SESSION_COOKIE = 'obs_session';
export const CSRF_COOKIE = 'obs_csrf';
export const CSRF_HEADER = 'x-csrf-token';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user's session, on routes behind `requireUiSession`. */
    session: Session;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The request's cookies, parsed by @fastify/cookie (registered on the UI's scope: plugin.ts). */
export const cookiesOf = (req: FastifyRequest) => req.cookies;

/** How long the UI's cookies (and sessions) live. */
export const sessionMaxAgeMs = (ctx: WebContext) => ctx.config.auth.sessionMaxAgeMinutes * 60_000;

export function setCookie(
  ctx: WebContext,
  req: FastifyRequest,
  reply: FastifyReply,
  name: string,
  value: string,
  maxAgeMs: number,
) {
  reply.setCookie(
    name,
    value,
    cookieAttributes({
      maxAgeSeconds: maxAgeMs / 1000,
      secure: secureFor(ctx.config.auth.publicUrl, req.protocol),
      sameSite: name === SESSION_COOKIE ? 'lax' : 'strict',
    }),
  );
}

/** The pre-session CSRF token: the cookie's, or a new one set on this reply. */
export function csrfCookieToken(ctx: WebContext, req: FastifyRequest, reply: FastifyReply): string {
  const existing = cookiesOf(req)[CSRF_COOKIE];
  if (existing && existing.length >= 32) return existing;
  const token = randomBytes(32).toString('base64url');
  setCookie(ctx, req, reply, CSRF_COOKIE, token, sessionMaxAgeMs(ctx));
  return token;
}

function equalTokens(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Throws 403 when a state-changing request is not from this origin with the expected token. */
export function checkCsrf(req: FastifyRequest, expected: string | undefined): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host !== req.headers.host) throw new Forbidden('CSRF check failed: cross-origin request');
  }
  const sent = req.headers[CSRF_HEADER];
  if (!equalTokens(Array.isArray(sent) ? sent[0] : sent, expected)) {
    throw new Forbidden(`CSRF check failed: send the token of /api/ui/session in ${CSRF_HEADER}`);
  }
}

/** The client a new session is opened from, for the user's sessions list. */
const sessionClient = (req: FastifyRequest): SessionClient => ({
  userAgent: req.headers['user-agent'],
  ip: req.ip,
});

/** Opens a session of `userId` for this request's client and sets its cookie on the reply. */
export async function openSession(ctx: WebContext, req: FastifyRequest, reply: FastifyReply, userId: string) {
  const session = await createSession(ctx.pool, userId, sessionMaxAgeMs(ctx), sessionClient(req));
  setCookie(ctx, req, reply, SESSION_COOKIE, session.token, sessionMaxAgeMs(ctx));
  return session;
}

export async function currentSession(ctx: WebContext, req: FastifyRequest): Promise<Session | undefined> {
  const token = cookiesOf(req)[SESSION_COOKIE];
  return token ? sessionOf(ctx.pool, token) : undefined;
}

/** Every route of `app` needs a signed-in user; state changes need the session's CSRF token. */
export function requireUiSession(app: FastifyInstance, ctx: WebContext): void {
  app.decorateRequest('session', null as never);
  app.addHook('onRequest', async (req) => {
    const session = await currentSession(ctx, req);
    if (!session) throw new Unauthorized('Sign in first');
    checkCsrf(req, session.csrfToken);
    req.session = session;
    // Where each user chooses, a version 4 page answers only a user who turned the preview on.
    if (req.routeOptions.config.gate === 'v4-reads') {
      const choice = readPathOf(ctx.config.mode, session.v4Preview);
      if (choice.canToggle && choice.path === 'v3') throw new NotFound(PREVIEW_OFF);
    }
  });
}
