/**
 * Opening an invitation link (`/invite/<token>`): what it invites to, then either a new account
 * for the invited email (name and password; signed in at once) or, for an email that has an
 * account, joining while signed in as that account. The token is the secret: only its hash is
 * stored, it is used once, and an unknown, used or expired token answers 404 alike.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { acceptInvitation, InvalidAccount, openInvitation } from '../../../features/users/members.ts';
import { memberConflict } from '../../../features/users/routes/ui-members.ts';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../../kernel/errors.ts';
import { translating, when } from '../../../platform/http/answers.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import { route } from '../../../platform/http/route.ts';
import type { WebContext } from '../core/context.ts';
import { CSRF_COOKIE, checkCsrf, cookiesOf, openSession, requireUiSession } from './session.ts';

const tokenParams = z.object({ token: z.string().min(20).max(100) });

async function openOrNotFound(ctx: WebContext, token: string) {
  const invitation = await openInvitation(ctx.pool, token);
  if (!invitation) throw new NotFound('this invitation does not exist, was used or has expired');
  return invitation;
}

const invalidAccount = when(InvalidAccount, (err) => new BadRequest('Invalid request data', err.message));

export const uiInvitationsPlugin: FastifyPluginAsync<PluginOptions<WebContext>> = async (app, { ctx }) => {
  route(
    app,
    {
      method: 'GET',
      url: '/api/ui/invitations/:token',
      tag: 'UI',
      summary: 'What an invitation link invites to',
      params: tokenParams,
    },
    async ({ params, reply }) => {
      reply.header('cache-control', 'no-store');
      const i = await openOrNotFound(ctx, params.token);
      return { email: i.email, role: i.role, projectName: i.projectName, existingUser: i.existingUser };
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/api/ui/invitations/:token/accept',
      tag: 'UI',
      summary: 'Create the invited account and sign in',
      params: tokenParams,
      body: z.strictObject({
        name: z.string().trim().min(1).max(200),
        password: z.string().min(1).max(1024),
      }),
    },
    async ({ params, body, req, reply }) => {
      checkCsrf(req, cookiesOf(req)[CSRF_COOKIE]);
      const invitation = await openOrNotFound(ctx, params.token);
      if (invitation.existingUser)
        throw new Conflict(`an account for ${invitation.email} exists: sign in, then open the link again`);
      const userId = await translating(
        () => acceptInvitation(ctx.pool, invitation, body),
        memberConflict,
        invalidAccount,
      );
      const session = await openSession(ctx, req, reply, userId);
      return { projectId: invitation.projectId, csrfToken: session.csrfToken };
    },
  );

  // Joining with an existing account: its session (and CSRF token) first, then the email must match.
  await app.register(async (signedIn) => {
    requireUiSession(signedIn, ctx);
    route(
      signedIn,
      {
        method: 'POST',
        url: '/api/ui/invitations/:token/join',
        tag: 'UI',
        summary: 'Join the invited project with the signed-in account',
        params: tokenParams,
      },
      async ({ params, req }) => {
        const invitation = await openOrNotFound(ctx, params.token);
        if (invitation.email !== req.session.user.email)
          throw new Forbidden(`this invitation is for ${invitation.email}; sign in as that account`);
        await translating(
          () => acceptInvitation(ctx.pool, invitation, { userId: req.session.user.id }),
          memberConflict,
          invalidAccount,
        );
        return { projectId: invitation.projectId };
      },
    );
  });
};
