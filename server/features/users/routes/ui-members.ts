/**
 * A project's people in the UI's project scope: members and pending invitations for every member
 * to see; invitations, role changes and removals for owners. An invitation answers with its
 * one-time link once (no mail is sent: the owner passes it on); the project always keeps an owner.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { Conflict, NotFound } from '../../../kernel/errors.ts';
import { ROLES } from '../../../kernel/roles.ts';
import { found, notFound, translating, when } from '../../../platform/http/answers.ts';
import type { RouteContext } from '../../../platform/http/context.ts';
import { familyPlugin, uiMount } from '../../../platform/http/project-routes.ts';
import {
  invite,
  MemberConflict,
  membersOf,
  pendingInvitations,
  setMemberRole,
  withdrawInvitation,
} from '../members.ts';
import { checkEmail } from '../store.ts';

const OWNERS = { atLeast: 'owner', refusal: 'only owners manage members' } as const;
const role = z.enum(ROLES);

/** The page that opens an invitation, on the deployment's public URL when one is set. */
export function invitationLink(ctx: RouteContext, req: FastifyRequest, token: string): string {
  const base = ctx.config.auth.publicUrl?.href ?? `${req.protocol}://${req.host}`;
  return `${base.replace(/\/$/, '')}/invite/${token}`;
}

/** A change the membership rules refuse (the project's last owner, an existing member) is a 409. */
export const memberConflict = when(MemberConflict, (err) => new Conflict(err.message));

export const uiMembersPlugin = familyPlugin(uiMount(OWNERS), (declare, ctx) => {
  declare(
    {
      method: 'GET',
      path: '/members',
      summary: "The project's members and pending invitations",
    },
    async ({ projectId }) => ({
      members: await membersOf(ctx.pool, projectId),
      invitations: await pendingInvitations(ctx.pool, projectId),
    }),
  );

  declare(
    {
      method: 'POST',
      path: '/invitations',
      summary: 'Invite someone by email; the one-time link is in this answer only',
      body: z.strictObject({
        email: z
          .string()
          .max(320)
          .refine((e) => checkEmail(e) === undefined, 'must be an email address'),
        role,
      }),
    },
    async ({ body, req, reply, projectId }) => {
      const members = await membersOf(ctx.pool, projectId);
      if (members.some((m) => m.email === body.email.trim().toLowerCase()))
        throw new Conflict(`email: ${body.email} is already a member of this project`);
      const { invitation, token } = await invite(
        ctx.pool,
        projectId,
        req.session.user.id,
        body.email,
        body.role,
      );
      reply.code(201);
      return { invitation, link: invitationLink(ctx, req, token) };
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '/invitations/:invitationId',
      summary: 'Withdraw a pending invitation',
    },
    async ({ params, projectId }) => {
      found(
        await withdrawInvitation(ctx.pool, projectId, params.invitationId),
        'invitation',
        params.invitationId,
      );
      return { ok: true };
    },
  );

  declare(
    {
      method: 'PUT',
      path: '/members/:userId',
      summary: "Set a member's role in the project",
      body: z.strictObject({ role }),
    },
    async ({ params, body, projectId }) => {
      const members = await membersOf(ctx.pool, projectId);
      if (!members.some((m) => m.userId === params.userId)) throw notFound('member', params.userId);
      await translating(() => setMemberRole(ctx.pool, projectId, params.userId, body.role), memberConflict);
      return { members: await membersOf(ctx.pool, projectId) };
    },
  );

  declare(
    {
      method: 'DELETE',
      path: '/members/:userId',
      summary: "Remove a member's project grant (an organization member keeps the organization's role)",
    },
    async ({ params, projectId }) => {
      const member = (await membersOf(ctx.pool, projectId)).find((m) => m.userId === params.userId);
      if (member?.via !== 'project') throw new NotFound(`member ${params.userId} has no project grant`);
      await translating(() => setMemberRole(ctx.pool, projectId, params.userId, null), memberConflict);
      return { members: await membersOf(ctx.pool, projectId) };
    },
  );
});
