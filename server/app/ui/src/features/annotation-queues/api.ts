/** Annotation queues, their items and assignees, and the score configs and scores annotators add. */
import type {
  AnnotationQueue,
  AnnotationQueueItem,
} from '../../../../../features/annotation-queues/rules.ts';
import { call, projectPath } from '../../shared/api.ts';

export type { AnnotationQueue, AnnotationQueueItem };

/** A score config an annotator scores with: its data type bounds the value. */
export interface ScoreConfig {
  id: string;
  name: string;
  dataType: 'NUMERIC' | 'CATEGORICAL' | 'BOOLEAN';
  minValue: number | null;
  maxValue: number | null;
  categories: { value: number; label: string }[] | null;
  description: string | null;
}

export type QueueObject = Pick<AnnotationQueueItem, 'objectType' | 'objectId'>;
/** A project member a queue item can be assigned to. */
export interface Assignee {
  id: string;
  email: string;
}
export interface QueueOverview {
  queues: (AnnotationQueue & { pending: number; completed: number })[];
  members: Assignee[];
}
export interface QueueReview {
  queue: AnnotationQueue;
  /** Oldest first, with the email of the member who completed each. */
  items: (AnnotationQueueItem & { annotatorEmail: string | null })[];
  assignees: Assignee[];
  members: Assignee[];
}

export const queuesApi = {
  scoreConfigs: (id: string) => call<{ data: ScoreConfig[] }>('GET', `${projectPath(id)}/score-configs`),
  addScore: (id: string, score: Record<string, unknown>) =>
    call<{ id: string }>('POST', `${projectPath(id)}/scores`, score),
  queueOverview: (id: string) => call<QueueOverview>('GET', `${projectPath(id)}/annotation-queue-overview`),
  createQueue: (id: string, body: { name: string; description?: string; scoreConfigIds: string[] }) =>
    call<AnnotationQueue>('POST', `${projectPath(id)}/annotation-queues`, body),
  changeQueue: (id: string, queueId: string, body: { name?: string; description?: string | null }) =>
    call<AnnotationQueue>(
      'PATCH',
      `${projectPath(id)}/annotation-queues/${encodeURIComponent(queueId)}`,
      body,
    ),
  deleteQueue: (id: string, queueId: string) =>
    call<{ success: boolean }>(
      'DELETE',
      `${projectPath(id)}/annotation-queues/${encodeURIComponent(queueId)}`,
    ),
  queueReview: (id: string, queueId: string) =>
    call<QueueReview>('GET', `${projectPath(id)}/annotation-queues/${encodeURIComponent(queueId)}/review`),
  addToQueue: (id: string, queueId: string, objects: QueueObject[]) =>
    call<{ added: number; skipped: number }>(
      'POST',
      `${projectPath(id)}/annotation-queues/${encodeURIComponent(queueId)}/selection`,
      { objects },
    ),
  setQueueItemStatus: (id: string, queueId: string, itemId: string, status: 'PENDING' | 'COMPLETED') =>
    call<AnnotationQueueItem>(
      'PATCH',
      `${projectPath(id)}/annotation-queues/${encodeURIComponent(queueId)}/items/${encodeURIComponent(itemId)}`,
      { status },
    ),
  assignQueue: (id: string, queueId: string, userId: string, assigned: boolean) =>
    call<unknown>(
      assigned ? 'POST' : 'DELETE',
      `${projectPath(id)}/annotation-queues/${encodeURIComponent(queueId)}/assignments`,
      { userId },
    ),
};
