/**
 * The audit log entry of a change a request made, recorded as its actor: the signed-in user on
 * the UI's routes, the API key on the public API's.
 */
import type { FastifyRequest } from 'fastify';
import type { RouteContext } from '../../../platform/http/context.ts';
import { type AuditActor, type AuditEntry, audit } from '../audit.ts';

/** One changed resource, by its id; of the request's project unless `projectId` says otherwise. */
type AuditedChange = Omit<AuditEntry, 'actor' | 'resourceIds' | 'projectId'> & {
  resourceId: string;
  projectId?: string | null;
};

/** Who made the request: `session` is only set behind the UI's session hook; elsewhere the API key. */
export const actorOf = (req: FastifyRequest): AuditActor =>
  req.session ? { userId: req.session.user.id } : { publicKey: req.principal.publicKey };

/** The request's project: the path's in the UI's project scope, else the API key's. */
const projectOf = (req: FastifyRequest) => (req.project ? req.project.id : req.principal.projectId);

/** Records `change` as made by the request's actor. */
export const auditAs = (
  ctx: RouteContext,
  req: FastifyRequest,
  { resourceId, projectId = projectOf(req), ...change }: AuditedChange,
) => audit(ctx.pool, { ...change, projectId, actor: actorOf(req), resourceIds: [resourceId] });
