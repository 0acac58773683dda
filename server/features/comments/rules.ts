/**
 * Comments on traces, observations, sessions and prompts: request shapes and where a comment is
 * shown. Pure. A trace is represented by its root observation in version 4, so a trace's comments
 * are also listed for that root observation (the spec: trace-level comments are shown on, and
 * attached to, the root observation).
 */
import { z } from 'zod';

export const COMMENT_OBJECT_TYPES = ['TRACE', 'OBSERVATION', 'SESSION', 'PROMPT'] as const;
export type CommentObjectType = (typeof COMMENT_OBJECT_TYPES)[number];

/** The SDKs document lower case (`trace`) and type upper case (`TRACE`); both are accepted. */
export const objectType = z
  .string()
  .transform((s) => s.toUpperCase())
  .pipe(z.enum(COMMENT_OBJECT_TYPES));

export const createCommentRequest = z.object({
  // Sent by the SDKs, but the API key alone selects the project, so it is not read.
  projectId: z.string().nullish(),
  objectType,
  objectId: z.string().min(1).max(800),
  content: z.string().min(1).max(5000),
  authorUserId: z.string().nullish(),
});
export type CreateCommentRequest = z.infer<typeof createCommentRequest>;

/** Historic traces become virtual root spans named `t-<traceId>`. */
export const VIRTUAL_ROOT_PREFIX = 't-';

/** The trace whose virtual root span this observation id names, if it names one. */
export function traceOfVirtualRoot(observationId: string): string | undefined {
  return observationId.startsWith(VIRTUAL_ROOT_PREFIX) && observationId.length > VIRTUAL_ROOT_PREFIX.length
    ? observationId.slice(VIRTUAL_ROOT_PREFIX.length)
    : undefined;
}

export interface CommentTarget {
  objectType: CommentObjectType;
  objectId: string;
}

/**
 * The objects whose comments a list for `asked` shows: the object itself and, for the root
 * observation of a trace, the trace.
 */
export function shownTargets(asked: CommentTarget, rootOfTrace: string | undefined): CommentTarget[] {
  const out = [asked];
  if (asked.objectType === 'OBSERVATION' && rootOfTrace !== undefined) {
    out.push({ objectType: 'TRACE', objectId: rootOfTrace });
  }
  return out;
}
