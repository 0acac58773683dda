/** Observations, traces, their sessions and users, comments, and trace deletion, on the user's read path. */
import type { TraceDeletionView as TraceDeletion } from '../../../../../features/deletion/queue.ts';
import type { RowScore } from '../../../../../features/reads/row-scores.ts';
import { call, type NumberedPage, type Page, projectPath, queryString } from '../../shared/api.ts';

export type { TraceDeletion };

/** A score as the pages show it: an `EVAL` score carries its reasoning and its judge's trace. */
export type Score = RowScore;

export interface Snippet {
  field: string;
  before: string;
  match: string;
  after: string;
}

export interface ObservationRow {
  id: string;
  traceId: string;
  name: string;
  type: string;
  startTime: string;
  endTime: string | null;
  latency: number | null;
  model: string | null;
  usageDetails: Record<string, number>;
  totalCost: number | null;
  userId: string | null;
  sessionId: string | null;
  tags: string[];
  level: string;
  environment: string;
  isRootObservation: boolean;
  scores: Score[];
  match?: Snippet;
  /** On a trace's root row: usage and cost summed over the trace's observations. */
  traceTotals?: TraceTotals;
}

export interface TraceTotals {
  usageDetails: Record<string, number>;
  totalCost: number | null;
}

export interface TraceObservationDetail extends ObservationRow {
  parentObservationId: string | null;
  modelId: string | null;
  costDetails: Record<string, number>;
  usagePricingTierName: string | null;
  /** The definition that priced it, as it is now; null when none or deleted since. */
  matchedModel: { id: string; modelName: string; matchPattern: string; builtIn: boolean } | null;
  /** Whether the cost is the one the SDK sent or one computed from a definition's prices. */
  costSource: 'sent' | 'computed' | null;
  input: string | null;
  output: string | null;
  metadata: Record<string, unknown>;
  statusMessage: string | null;
  completionStartTime: string | null;
}

export interface Comment {
  id: string;
  objectType: string;
  objectId: string;
  content: string;
  authorUserId: string | null;
  createdAt: string;
}

export interface TraceDetail {
  traceId: string;
  totals: TraceTotals;
  observations: TraceObservationDetail[];
  comments: Comment[];
  truncated: boolean;
}

export interface GroupingRow {
  id: string;
  firstSeen: string;
  lastSeen: string;
  traceCount: number;
  observationCount: number;
  userIds?: string[];
  sessionIds?: string[];
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  totalCost: number;
}

export const tracesApi = {
  observations: (id: string, query: Record<string, string | undefined>) =>
    call<Page<ObservationRow>>('GET', `${projectPath(id)}/observations?${queryString(query)}`),
  legacyTraces: (id: string, query: Record<string, string | undefined>) =>
    call<NumberedPage<ObservationRow>>('GET', `${projectPath(id)}/legacy/traces?${queryString(query)}`),
  /** Sessions or users on the user's read path: `events_core` (v4) or the legacy traces (v3). */
  groupings: (
    id: string,
    grouping: 'sessions' | 'users',
    path: 'v3' | 'v4',
    query: Record<string, string | undefined>,
  ) =>
    call<Page<GroupingRow>>(
      'GET',
      `${projectPath(id)}/${path === 'v3' ? 'legacy/' : ''}${grouping}?${queryString(query)}`,
    ),
  /** A trace on the user's read path: the events tables (v4) or the legacy tables (v3). */
  trace: (id: string, traceId: string, path: 'v3' | 'v4') =>
    call<TraceDetail>(
      'GET',
      `${projectPath(id)}/${path === 'v3' ? 'legacy/' : ''}traces/${encodeURIComponent(traceId)}`,
    ),
  deleteTrace: (id: string, traceId: string) =>
    call<{ message: string; deletionId: string }>(
      'DELETE',
      `${projectPath(id)}/traces/${encodeURIComponent(traceId)}`,
    ),
  traceDeletion: (id: string, deletionId: string) =>
    call<TraceDeletion>('GET', `${projectPath(id)}/trace-deletions/${encodeURIComponent(deletionId)}`),
  /** The deletions of the trace still under way. */
  pendingTraceDeletions: (id: string, traceId: string) =>
    call<{ data: TraceDeletion[] }>(
      'GET',
      `${projectPath(id)}/trace-deletions?traceId=${encodeURIComponent(traceId)}`,
    ),
  addComment: (id: string, comment: { objectType: string; objectId: string; content: string }) =>
    call<{ id: string }>('POST', `${projectPath(id)}/comments`, comment),
};
