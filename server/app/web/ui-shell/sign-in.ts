/**
 * Sign-in for the web UI (`/api/ui/session`, `/api/ui/auth/login`, `/api/ui/auth/logout`,
 * `/api/ui/auth/password`): email and password checked against the memory-hard hash, a server-side
 * session in an HttpOnly cookie. Every password check is first counted per (account, client
 * address) and per account (server/features/users/login-throttle.ts), and the password routes are limited
 * per client address by @fastify/rate-limit; both count in Redis when the web has one, so every
 * replica enforces one limit. The client address is the socket's peer unless
 * SERVICE_TRUSTED_PROXIES names the proxy in front (Fastify's `trustProxy`).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  memorySignInThrottle,
  SIGN_IN_WINDOW_MS,
  type SignInThrottle,
  signInRules,
} from '../../../features/users/login-throttle.ts';
import { decoyHash, verifyPassword } from '../../../features/users/passwords.ts';
import { PREVIEW_OFF, readPathOf } from '../../../features/users/read-path.ts';
import {
  checkPassword,
  deleteSession,
  normalizeEmail,
  setPassword,
  userByEmail,
} from '../../../features/users/store.ts';
import { BadRequest, TooManyRequests, Unauthorized } from '../../../kernel/errors.ts';
import { refusalOf } from '../../../platform/http/gates.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';
import type { WebContext } from '../core/context.ts';
import {
  CSRF_COOKIE,
  checkCsrf,
  cookiesOf,
  csrfCookieToken,
  currentSession,
  openSession,
  requireUiSession,
  SESSION_COOKIE,
  setCookie,
} from './session.ts';

const loginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) });
const passwordBody = z.object({
  currentPassword: z.string().min(1).max(1024),
  newPassword: z.string().min(1).max(1024),
});

/**
 * Checks `password` for `email` after counting the attempt; a refused attempt is never checked.
 * An unknown email costs one hash check too, so timing does not tell which emails exist.
 */
async function checkSignIn(
  ctx: WebContext,
  throttle: SignInThrottle,
  req: FastifyRequest,
  email: string,
  password: string,
) {
  const wait = await throttle.attempt(email, req.ip);
  if (wait !== undefined) throw new TooManyRequests('Too many sign-in attempts; try again later', wait);
  const user = await userByEmail(ctx.pool, email);
  const ok = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
  if (!user || !ok) throw new Unauthorized('Invalid email or password');
  await throttle.succeeded(email, req.ip);
  return user;
}

/** Limits the routes of `app` per client address, over all accounts, in Redis when there is one. */
async function limitPerAddress(app: FastifyInstance, ctx: WebContext) {
  await app.register(rateLimit, {
    global: false,
    ...(ctx.signInStore ? { redis: ctx.signInStore, nameSpace: 'signin-address:' } : {}),
  });
  app.addHook(
    'onRequest',
    app.rateLimit({
      max: ctx.config.auth.signInLimitPerAddress,
      timeWindow: SIGN_IN_WINDOW_MS,
      groupId: 'sign-in',
      errorResponseBuilder: (_req, c) =>
        new TooManyRequests(
          'Too many sign-in attempts from this address; try again later',
          Math.ceil(c.ttl / 1000),
        ),
    }),
  );
}

export const uiAuthPlugin: FastifyPluginAsync<PluginOptions<WebContext>> = async (app, { ctx }) => {
  const throttle =
    ctx.signIns ?? memorySignInThrottle(signInRules(ctx.config.auth.signInLimitPerAccountAddress));
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
        csrfToken: session ? session.csrfToken : csrfCookieToken(ctx, req, reply),
        deployment: deployment(session?.v4Preview ?? false),
      };
    },
  );

  // The routes that check a password: limited per client address before anything else runs.
  await app.register(async (checked) => {
    await limitPerAddress(checked, ctx);

    route(
      checked,
      { method: 'POST', url: '/api/ui/auth/login', tag: 'UI', summary: 'Sign in', body: loginBody },
      async ({ body, req, reply }) => {
        checkCsrf(req, cookiesOf(req)[CSRF_COOKIE]);
        const user = await checkSignIn(ctx, throttle, req, normalizeEmail(body.email), body.password);
        const session = await openSession(ctx, req, reply, user.id);
        return {
          user: { id: user.id, email: user.email, name: user.name },
          csrfToken: session.csrfToken,
          deployment: deployment(user.v4_preview),
        };
      },
    );

    // Changing the password is for the signed-in user: its scope checks the session and CSRF token
    // before the body is even parsed.
    await checked.register(async (signedIn) => {
      requireUiSession(signedIn, ctx);
      route(
        signedIn,
        {
          method: 'POST',
          url: '/api/ui/auth/password',
          tag: 'UI',
          summary: 'Change the password; every session of the user ends, the caller gets a new one',
          body: passwordBody,
        },
        async ({ body, req, reply }) => {
          const email = req.session.user.email;
          const problem = checkPassword(body.newPassword, email, 'newPassword');
          if (problem) throw new BadRequest('Invalid request data', problem);
          const user = await checkSignIn(ctx, throttle, req, email, body.currentPassword);
          await setPassword(ctx.pool, user.email, body.newPassword);
          const fresh = await openSession(ctx, req, reply, user.id);
          return { ok: true, csrfToken: fresh.csrfToken };
        },
      );
    });
  });

  route(
    app,
    { method: 'POST', url: '/api/ui/auth/logout', tag: 'UI', summary: 'Sign out' },
    async ({ req, reply }) => {
      const session = await currentSession(ctx, req);
      if (!session) throw new Unauthorized('Sign in first');
      checkCsrf(req, session.csrfToken);
      await deleteSession(ctx.pool, cookiesOf(req)[SESSION_COOKIE]!);
      setCookie(ctx, req, reply, SESSION_COOKIE, '', 0);
      return { ok: true };
    },
  );
};
