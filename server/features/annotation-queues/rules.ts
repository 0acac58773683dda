/**
 * Annotation queues as the reference's public API defines them (`annotation-queues.yml`): what a
 * request may carry, the shapes answered, and the rules on an item's status. Pure: the SQL lives in
 * `store.ts`.
 */
import { z } from 'zod';

export const QUEUE_OBJECT_TYPES = ['TRACE', 'OBSERVATION', 'SESSION'] as const;
export const QUEUE_STATUSES = ['PENDING', 'COMPLETED'] as const;
export type QueueStatus = (typeof QUEUE_STATUSES)[number];

export const queueStatus = z.enum(QUEUE_STATUSES);

export const createQueueRequest = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000).nullish(),
  scoreConfigIds: z.array(z.string().min(1)).min(1, 'needs at least one score config id'),
});
export type CreateQueueRequest = z.infer<typeof createQueueRequest>;

/** A change to a queue (the UI's; the reference's public API has none): the fields given change. */
export const updateQueueRequest = createQueueRequest
  .partial()
  .refine((v) => Object.keys(v).length > 0, 'At least one of name, description, scoreConfigIds is required');
export type UpdateQueueRequest = z.infer<typeof updateQueueRequest>;

export const createItemRequest = z.object({
  objectId: z.string().min(1),
  objectType: z.enum(QUEUE_OBJECT_TYPES),
  status: queueStatus.optional(),
});
export type CreateItemRequest = z.infer<typeof createItemRequest>;

export const updateItemRequest = z.object({ status: queueStatus.optional() });

export const assignmentRequest = z.object({ userId: z.string().min(1) });

/** `AnnotationQueue` of the reference. */
export const annotationQueue = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  scoreConfigIds: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AnnotationQueue = z.infer<typeof annotationQueue>;

/** `AnnotationQueueItem` of the reference: `completedAt` is null until the item is completed. */
export const annotationQueueItem = z.object({
  id: z.string(),
  queueId: z.string(),
  objectId: z.string(),
  objectType: z.enum(QUEUE_OBJECT_TYPES),
  status: queueStatus,
  completedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AnnotationQueueItem = z.infer<typeof annotationQueueItem>;

/** The ids asked for that the project has no score config for, in the order asked. */
export function missingConfigIds(asked: string[], found: Iterable<string>): string[] {
  const known = new Set(found);
  return [...new Set(asked)].filter((id) => !known.has(id));
}

export interface StatusChange {
  status: QueueStatus;
  /** ISO time, null to clear, or 'keep' for the stored value. */
  completedAt: string | null | 'keep';
}

/**
 * The status an update leaves: completing stamps the time (again, as the reference does), reopening
 * clears it so a pending item never shows a completion; no status leaves the item as it is.
 */
export function statusChange(current: QueueStatus, asked: QueueStatus | undefined, now: Date): StatusChange {
  if (asked === undefined) return { status: current, completedAt: 'keep' };
  return asked === 'COMPLETED'
    ? { status: 'COMPLETED', completedAt: now.toISOString() }
    : { status: 'PENDING', completedAt: null };
}
