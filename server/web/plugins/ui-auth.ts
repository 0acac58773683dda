/**
 * Sign-in for the web UI (`/api/ui/session`, `/api/ui/auth/login`, `/api/ui/auth/logout`): email
 * and password checked against the memory-hard hash, a server-side session in an HttpOnly cookie,
 * failed sign-ins rate limited per email and per client address (server/users/login-throttle.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { LoginThrottle, loginKeys } from '../../users/login-throttle.ts';
import { decoyHash, verifyPassword } from '../../users/passwords.ts';
import { PREVIEW_OFF, readPathOf } from '../../users/read-path.ts';
import {
  createSession,
  deleteSession,
  normalizeEmail,
  SESSION_TTL_MS,
  userByEmail,
} from '../../users/store.ts';
import { TooManyRequests, Unauthorized } from '../errors.ts';
import { refusalOf } from '../gates.ts';
import { route } from '../route.ts';
import {
  CSRF_COOKIE,
  checkCsrf,
  cookiesOf,
  csrfCookieToken,
  currentSession,
  SESSION_COOKIE,
  setCookie,
} from '../ui-session.ts';
import type { PluginOptions } from './types.ts';

const loginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) });

export const uiAuthPlugin: FastifyPluginAsync<PluginOptions> = async (app, { ctx }) => {
  const throttle = new LoginThrottle();
  // What the user's pages may read: the deployment's read path, and the user's preview choice where
  // the deployment lets each user choose (../../users/read-path.ts).
  const deployment = (v4Preview: boolean) => {
    const refusal = refusalOf('v4-reads', ctx.config.mode);
    const choice = readPathOf(ctx.config.mode, v4Preview);
    const unavailable = refusal ?? (choice.path === 'v3' ? PREVIEW_OFF : undefined);
    return {
      release: ctx.config.mode.release,
      writeMode: ctx.config.mode.writeMode,
      v4Reads: choice.path === 'v4',
      ...(unavailable === undefined ? {} : { v4ReadsUnavailable: unavailable }),
      readPath: choice,
    };
  };

  route(
    app,
    { method: 'GET', url: '/api/ui/session', tag: 'UI', summary: 'The signed-in user, or none' },
    async ({ req, reply }) => {
      reply.header('cache-control', 'no-store');
      const session = await currentSession(ctx, req);
      return {
        user: session?.user ?? null,
        csrfToken: session ? session.csrfToken : csrfCookieToken(req, reply),
        deployment: deployment(session?.v4Preview ?? false),
      };
    },
  );

  route(
    app,
    { method: 'POST', url: '/api/ui/auth/login', tag: 'UI', summary: 'Sign in', body: loginBody },
    async ({ body, req, reply }) => {
      checkCsrf(req, cookiesOf(req)[CSRF_COOKIE]);
      const email = normalizeEmail(body.email);
      const keys = loginKeys(email, req.ip);
      const wait = throttle.retryAfter(keys, Date.now());
      if (wait !== undefined) throw new TooManyRequests('Too many failed sign-ins; try again later', wait);
      const user = await userByEmail(ctx.pool, email);
      // An unknown email costs one hash check too, so timing does not tell which emails exist.
      const ok = await verifyPassword(body.password, user?.password_hash ?? (await decoyHash()));
      if (!user || !ok) {
        throttle.fail(keys, Date.now());
        throw new Unauthorized('Invalid email or password');
      }
      throttle.succeed(keys[0]![0]);
      const session = await createSession(ctx.pool, user.id);
      setCookie(req, reply, SESSION_COOKIE, session.token, SESSION_TTL_MS);
      return {
        user: { id: user.id, email: user.email, name: user.name },
        csrfToken: session.csrfToken,
        deployment: deployment(user.v4_preview),
      };
    },
  );

  route(
    app,
    { method: 'POST', url: '/api/ui/auth/logout', tag: 'UI', summary: 'Sign out' },
    async ({ req, reply }) => {
      const session = await currentSession(ctx, req);
      if (!session) throw new Unauthorized('Sign in first');
      checkCsrf(req, session.csrfToken);
      await deleteSession(ctx.pool, cookiesOf(req)[SESSION_COOKIE]!);
      setCookie(req, reply, SESSION_COOKIE, '', 0);
      return { ok: true };
    },
  );
};
