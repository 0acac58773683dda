/** The UI's calls to its JSON routes under /api/ui: same origin, cookies, the CSRF header on writes. */

import type { AnnotationQueue, AnnotationQueueItem } from '../../../features/annotation-queues/rules.ts';
import type {
  CreateWidget,
  Dashboard,
  TimeRange as DashboardRange,
  Placement,
  UpdatePlacement as PlacementChange,
  WidgetDefinition,
} from '../../../features/dashboards/model.ts';
import type { TraceDeletionView as TraceDeletion } from '../../../features/deletion/queue.ts';
import type { publicEvaluator, publicRule } from '../../../features/evaluation/api.ts';
import type { LoggedExecution } from '../../../features/evaluation/executions.ts';
import type {
  publicConnection,
  UpsertConnectionRequest,
} from '../../../features/llm-connections/connections.ts';
import type { ApiKeySummary } from '../../../features/projects/keys.ts';
import type { OrganizationAccess as Organization } from '../../../features/projects/user-organizations.ts';
import type { PromptMeta as PromptSummary } from '../../../features/prompts/rules.ts';
import type { Prompt as PromptVersion } from '../../../features/prompts/store.ts';
import type { RowScore } from '../../../features/reads/row-scores.ts';
import type { SessionSummary as UserSession } from '../../../features/users/sessions.ts';
import type { ColumnKind, FilterCondition } from './filter-syntax.ts';

export type { Organization, TraceDeletion, UserSession };

export interface User {
  id: string;
  email: string;
  name: string | null;
}

export interface Deployment {
  release: string;
  writeMode: string;
  v4Reads: boolean;
  readPath: ReadPathChoice;
}

export interface ReadPathChoice {
  path: 'v3' | 'v4';
  canToggle: boolean;
  fixedBecause?: string;
}

export interface SessionInfo {
  user: User | null;
  csrfToken: string;
  deployment: Deployment;
}

export interface Project {
  id: string;
  name: string;
  organization: { id: string; name: string };
  role: 'owner' | 'member' | 'viewer';
  /** Days the project keeps its data; null: forever. */
  retentionDays: number | null;
}

/** An API key as listed: its secret only masked. */
export type ApiKey = ApiKeySummary;

export interface Member {
  userId: string;
  email: string;
  name: string | null;
  role: Project['role'];
  via: 'project' | 'organization';
}

export interface Invitation {
  id: string;
  email: string;
  role: Project['role'];
  createdAt: string;
  expiresAt: string;
}

export interface InvitationView {
  email: string;
  role: Project['role'];
  projectName: string;
  existingUser: boolean;
}

export interface ProjectInfo {
  project: Project;
  columns: Record<string, ColumnKind>;
  sortColumns: string[];
}

/** A score as the pages show it: an `EVAL` score carries its reasoning and its judge's trace. */
export type Score = RowScore;

export type LlmConnection = ReturnType<typeof publicConnection>;
export type Evaluator = ReturnType<typeof publicEvaluator>;
export type EvaluationRule = Awaited<ReturnType<typeof publicRule>>;
export type Execution = LoggedExecution & { score: Score | null };
/** A rule's execution log, with how many executions wait and from how many its scan holds. */
export type ExecutionLogPage = NumberedPage<Execution> & { queue: { waiting: number; holdsAt: number } };
export interface MappingEntry {
  variable: string;
  source: string;
  jsonPath?: string;
}
export interface MappingPreview {
  sample: { id: string; traceId: string; startTime: string } | null;
  variables: { variable: string; value: unknown; problem: string | null }[];
  prompt: string | null;
}

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

export interface BackfillStepView {
  step: number;
  name: string;
  status: 'dormant' | 'pending' | 'running' | 'finished' | 'failed';
  chunksDone: number;
  chunksTotal: number;
  finishedAt: string | null;
  failedAt: string | null;
  failedReason: string | null;
  lockedBy: string | null;
  /** kubectl: the annotation command when an operator runs the service (it then owns the retries). */
  retry: { command: string; annotation: string; value: string; kubectl: string | null } | null;
}

export interface PropagationView {
  enabled: boolean;
  stuck: boolean;
  idle: boolean;
  lastSuccessAt: string | null;
  secondsSinceLastSuccess: number | null;
  lastProcessedPartition: string | null;
  propagationDelaySeconds: number | null;
  thresholdSeconds: number;
  lastError: string | null;
}

export interface ProducerView {
  projectId: string;
  publicKey: string;
  sdkName: string;
  sdkVersion: string;
  path: string;
  consequence: 'refused' | 'loses-propagation';
  lastSeen: string;
  requests: number;
  advice: string;
}

/** An enabled trace-level evaluation rule: it stops at the cutover to events_only. */
export interface LegacyEvaluatorView {
  projectId: string;
  ruleId: string;
  name: string;
}

export interface MigrationInfo {
  release: string;
  writeMode: string;
  allowPreviewOptIn: boolean;
  backfillMayRun: boolean;
  /** Owner of the deployment's organization: sees the backfill, the propagation, every producer. */
  deploymentAdmin: boolean;
  /** Null for a user who is not a deployment admin. */
  steps: BackfillStepView[] | null;
  propagation: PropagationView | null;
  producers: {
    since: string;
    window: string;
    data: ProducerView[];
    legacyEvaluators: LegacyEvaluatorView[];
  } | null;
}

export interface Dataset {
  id: string;
  name: string;
  description: string | null;
  createdAt?: string;
}

export interface DatasetItem {
  id: string;
  status: string;
  input: unknown;
  expectedOutput: unknown;
  metadata: unknown;
  createdAt: string;
}

export interface DatasetRun {
  id: string;
  name: string;
  description: string | null;
  createdAt: string | null;
  itemCount: number | null;
}

export interface PricingTier {
  id?: string;
  name: string;
  isDefault: boolean;
  priority: number;
  conditions: Record<string, unknown>[];
  prices: Record<string, number>;
}

/** A model definition as the models API answers it (server/features/models/definitions.ts `toApiModel`). */
export interface ModelDefinition {
  id: string;
  modelName: string;
  matchPattern: string;
  startDate: string | null;
  unit: string | null;
  tokenizerId: string | null;
  tokenizerConfig: unknown;
  isLangfuseManaged: boolean;
  pricingTiers: PricingTier[];
}

/** A model definition as the page sends it (the models API's create request). */
export interface ModelRequest {
  modelName: string;
  matchPattern: string;
  startDate?: string | null;
  unit: string;
  pricingTiers: PricingTier[];
  tokenizerId?: string | null;
  tokenizerConfig?: unknown;
}

/** A masking rule as the masking API answers it (server/features/masking/rules.ts). */
export interface MaskingRule {
  id: string;
  name: string;
  detector: string;
  pattern: string | null;
  replacement: string | null;
  enabled: boolean;
  datasetItems: boolean;
  updatedAt: string;
}

/** A dry run's answer: how many recent observations were read, and the masked form of those that would change. */
export interface MaskingPreview {
  scanned: number;
  observations: {
    id: string;
    traceId: string;
    masked: { input?: string; output?: string; metadata?: Record<string, string> };
  }[];
}

/** An alert rule as the alerts API answers it (server/features/alerts/api.ts). */
export interface AlertRule {
  id: string;
  name: string;
  metric: { view: string; measure: string; aggregation: string; filters: unknown[] };
  operator: string;
  warningThreshold: number | null;
  alertThreshold: number;
  window: string;
  frequency: string;
  noDataMode: string;
  renotifyInterval: string | null;
  paused: boolean;
  channelIds: string[];
  state: string | null;
  stateSince: string | null;
  lastValue: number | null;
  lastEvaluatedAt: string | null;
  lastNotifiedAt: string | null;
}

export interface AlertTransition {
  fromState: string | null;
  toState: string;
  value: number | null;
  evaluatedAt: string;
}

export interface AlertChannel {
  id: string;
  name: string;
  type: 'webhook' | 'slack';
  url?: string;
  signingSecret?: string;
}

export interface NumberedPage<T> {
  data: T[];
  meta: { page: number; limit: number; totalItems: number; totalPages: number };
}

export interface RunResult {
  runId: string;
  itemId: string;
  traceId: string;
  output: string | null;
  scores: Score[];
}

export interface RunComparison {
  runs: DatasetRun[];
  rows: { item: DatasetItem; results: (RunResult | null)[] }[];
  means: Record<string, number>[];
}

export interface Page<T> {
  data: T[];
  meta: { cursor?: string };
}

/** A dashboard with the definition of each tile, by placement id. */
export interface DashboardView {
  dashboard: Dashboard;
  widgets: Record<string, WidgetDefinition & { id?: string }>;
}
export type MetricsRow = Record<string, unknown>;
export interface TileData {
  data: MetricsRow[];
  query: unknown;
}
/** A prompt name with its versions, labels and tags; one stored prompt version. */
export type {
  AnnotationQueue,
  AnnotationQueueItem,
  CreateWidget,
  Dashboard,
  DashboardRange,
  Placement,
  PlacementChange,
  PromptSummary,
  PromptVersion,
  WidgetDefinition,
};

export interface PlaygroundRun {
  completion: string;
  usage: Record<string, number>;
  cost: Record<string, number> | null;
  latencyMs: number;
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

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

let csrfToken = '';
export const setCsrfToken = (t: string) => {
  csrfToken = t;
};

const queryString = (query: Record<string, string | undefined>) => {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') qs.set(k, v);
  return qs.toString();
};
const projectPath = (id: string) => `/api/ui/projects/${encodeURIComponent(id)}`;

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const payload = (await res.json().catch(() => ({}))) as {
    message?: string;
    error?: string;
    details?: { field?: string };
  };
  if (!res.ok) {
    const field = payload.details?.field;
    const text = [payload.message, payload.error].filter(Boolean).join(': ') + (field ? ` (${field})` : '');
    throw new ApiError(res.status, text || `${res.status} ${res.statusText}`);
  }
  return payload as T;
}

/** A project's rules under `collection`: the first page of 100, create, and update one. */
function ruleCalls<R>(collection: string) {
  const path = (id: string) => `${projectPath(id)}/${collection}`;
  return {
    list: (id: string) => call<NumberedPage<R>>('GET', `${path(id)}?limit=100`),
    create: (id: string, body: Record<string, unknown>) => call<R>('POST', path(id), body),
    update: (id: string, ruleId: string, body: Record<string, unknown>) =>
      call<R>('PATCH', `${path(id)}/${encodeURIComponent(ruleId)}`, body),
  };
}
const alertRules = ruleCalls<AlertRule>('alert-rules');
const maskingRules = ruleCalls<MaskingRule>('masking-rules');
const evaluationRules = ruleCalls<EvaluationRule>('evaluation-rules');

export const api = {
  session: () => call<SessionInfo>('GET', '/api/ui/session'),
  login: (email: string, password: string) =>
    call<SessionInfo>('POST', '/api/ui/auth/login', { email, password }),
  logout: () => call<{ ok: boolean }>('POST', '/api/ui/auth/logout'),
  changePassword: (currentPassword: string, newPassword: string) =>
    call<{ ok: boolean; csrfToken: string }>('POST', '/api/ui/auth/password', {
      currentPassword,
      newPassword,
    }),
  projects: () => call<{ data: Project[] }>('GET', '/api/ui/projects'),
  project: (id: string) => call<ProjectInfo>('GET', projectPath(id)),
  apiKeys: (id: string) => call<{ data: ApiKey[] }>('GET', `${projectPath(id)}/api-keys`),
  createApiKey: (id: string, note: string) =>
    call<ApiKey & { secretKey: string }>('POST', `${projectPath(id)}/api-keys`, { note }),
  revokeApiKey: (id: string, keyId: string) =>
    call<{ ok: boolean }>('DELETE', `${projectPath(id)}/api-keys/${encodeURIComponent(keyId)}`),
  members: (id: string) =>
    call<{ members: Member[]; invitations: Invitation[] }>('GET', `${projectPath(id)}/members`),
  invite: (id: string, email: string, role: Project['role']) =>
    call<{ invitation: Invitation; link: string }>('POST', `${projectPath(id)}/invitations`, { email, role }),
  withdrawInvitation: (id: string, invitationId: string) =>
    call<{ ok: boolean }>('DELETE', `${projectPath(id)}/invitations/${encodeURIComponent(invitationId)}`),
  setMemberRole: (id: string, userId: string, role: Project['role']) =>
    call<{ members: Member[] }>('PUT', `${projectPath(id)}/members/${encodeURIComponent(userId)}`, { role }),
  removeMember: (id: string, userId: string) =>
    call<{ members: Member[] }>('DELETE', `${projectPath(id)}/members/${encodeURIComponent(userId)}`),
  invitation: (token: string) =>
    call<InvitationView>('GET', `/api/ui/invitations/${encodeURIComponent(token)}`),
  acceptInvitation: (token: string, name: string, password: string) =>
    call<{ projectId: string; csrfToken: string }>(
      'POST',
      `/api/ui/invitations/${encodeURIComponent(token)}/accept`,
      {
        name,
        password,
      },
    ),
  joinInvitation: (token: string) =>
    call<{ projectId: string }>('POST', `/api/ui/invitations/${encodeURIComponent(token)}/join`),
  organizations: () => call<{ data: Organization[] }>('GET', '/api/ui/organizations'),
  createOrganization: (name: string) =>
    call<{ organization: Organization }>('POST', '/api/ui/organizations', { name }),
  renameOrganization: (orgId: string, name: string) =>
    call<{ organization: Organization }>('PUT', `/api/ui/organizations/${encodeURIComponent(orgId)}`, {
      name,
    }),
  deleteOrganization: (orgId: string, confirmName: string) =>
    call<{ ok: boolean }>('DELETE', `/api/ui/organizations/${encodeURIComponent(orgId)}`, { confirmName }),
  createProject: (orgId: string, name: string) =>
    call<{ project: Project }>('POST', `/api/ui/organizations/${encodeURIComponent(orgId)}/projects`, {
      name,
    }),
  renameProject: (id: string, name: string) => call<{ project: Project }>('PUT', projectPath(id), { name }),
  deleteProject: (id: string, confirmName: string) =>
    call<{ ok: boolean }>('DELETE', projectPath(id), { confirmName }),
  sessions: () => call<{ data: UserSession[] }>('GET', '/api/ui/account/sessions'),
  revokeSession: (sessionId: string) =>
    call<{ ok: boolean }>('DELETE', `/api/ui/account/sessions/${encodeURIComponent(sessionId)}`),
  revokeOtherSessions: () => call<{ revoked: number }>('DELETE', '/api/ui/account/sessions'),
  setRetention: (id: string, retentionDays: number | null) =>
    call<{ project: Project }>('PUT', `${projectPath(id)}/retention`, { retentionDays }),
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
  datasets: (id: string, page: number) =>
    call<NumberedPage<Dataset>>('GET', `${projectPath(id)}/datasets?page=${page}`),
  dataset: (id: string, datasetId: string, page: number) =>
    call<{ dataset: Dataset; items: NumberedPage<DatasetItem>; runs: DatasetRun[] }>(
      'GET',
      `${projectPath(id)}/datasets/${encodeURIComponent(datasetId)}?page=${page}`,
    ),
  compareRuns: (id: string, datasetId: string, runs: string[]) =>
    call<RunComparison>(
      'GET',
      `${projectPath(id)}/datasets/${encodeURIComponent(datasetId)}/compare?${queryString({ runs: runs.join(',') })}`,
    ),
  setV4Preview: (enabled: boolean) =>
    call<{ readPath: ReadPathChoice }>('PUT', '/api/ui/preferences/v4-preview', { enabled }),
  migration: () => call<MigrationInfo>('GET', '/api/ui/migration'),
  alertRules: alertRules.list,
  createAlertRule: alertRules.create,
  updateAlertRule: alertRules.update,
  alertHistory: (id: string, ruleId: string) =>
    call<NumberedPage<AlertTransition>>(
      'GET',
      `${projectPath(id)}/alert-rules/${encodeURIComponent(ruleId)}/history?limit=20`,
    ),
  alertChannels: (id: string) =>
    call<NumberedPage<AlertChannel>>('GET', `${projectPath(id)}/alert-channels?limit=100`),
  createAlertChannel: (id: string, body: { name: string; type: string; url: string }) =>
    call<AlertChannel>('POST', `${projectPath(id)}/alert-channels`, body),
  testAlertChannel: (id: string, channelId: string) =>
    call<{ status: string; responseCode: number | null; error: string | null }>(
      'POST',
      `${projectPath(id)}/alert-channels/${encodeURIComponent(channelId)}/test`,
    ),
  models: (id: string) => call<{ data: ModelDefinition[] }>('GET', `${projectPath(id)}/models`),
  matchModel: (id: string, name: string) =>
    call<{ name: string; at: string; model: ModelDefinition | null }>(
      'GET',
      `${projectPath(id)}/models/match?${queryString({ name })}`,
    ),
  createModel: (id: string, body: ModelRequest) =>
    call<ModelDefinition>('POST', `${projectPath(id)}/models`, body),
  updateModel: (id: string, modelId: string, body: ModelRequest) =>
    call<ModelDefinition>('PUT', `${projectPath(id)}/models/${encodeURIComponent(modelId)}`, body),
  deleteModel: (id: string, modelId: string) =>
    call<{ message: string }>('DELETE', `${projectPath(id)}/models/${encodeURIComponent(modelId)}`),
  llmConnections: (id: string) =>
    call<NumberedPage<LlmConnection>>('GET', `${projectPath(id)}/llm-connections?limit=100`),
  maskingRules: maskingRules.list,
  createMaskingRule: maskingRules.create,
  updateMaskingRule: maskingRules.update,
  deleteMaskingRule: (id: string, ruleId: string) =>
    call<{ message: string }>('DELETE', `${projectPath(id)}/masking-rules/${encodeURIComponent(ruleId)}`),
  previewMasking: (id: string) =>
    call<MaskingPreview>('POST', `${projectPath(id)}/masking-preview`, { limit: 100 }),
  saveLlmConnection: (id: string, body: UpsertConnectionRequest) =>
    call<LlmConnection>('PUT', `${projectPath(id)}/llm-connections`, body),
  deleteLlmConnection: (id: string, connectionId: string) =>
    call<{ message: string }>(
      'DELETE',
      `${projectPath(id)}/llm-connections/${encodeURIComponent(connectionId)}`,
    ),
  evaluators: (id: string) => call<NumberedPage<Evaluator>>('GET', `${projectPath(id)}/evaluators?limit=100`),
  createEvaluator: (id: string, body: Record<string, unknown>) =>
    call<Evaluator>('POST', `${projectPath(id)}/evaluators`, body),
  evaluatorVersions: (id: string, evaluatorId: string) =>
    call<{ data: Evaluator[] }>(
      'GET',
      `${projectPath(id)}/evaluators/${encodeURIComponent(evaluatorId)}/versions`,
    ),
  evaluationRules: evaluationRules.list,
  createEvaluationRule: evaluationRules.create,
  updateEvaluationRule: evaluationRules.update,
  ruleFilterColumns: (id: string) =>
    call<Record<'observation' | 'experiment' | 'trace', Record<string, ColumnKind>>>(
      'GET',
      `${projectPath(id)}/evaluation-rules/filter-columns`,
    ),
  previewMapping: (
    id: string,
    body: { target: string; filter: FilterCondition[]; evaluator: string; mapping: MappingEntry[] },
  ) => call<MappingPreview>('POST', `${projectPath(id)}/evaluation-rules/preview`, body),
  executions: (id: string, ruleId: string) =>
    call<ExecutionLogPage>(
      'GET',
      `${projectPath(id)}/evaluation-rules/${encodeURIComponent(ruleId)}/executions?limit=100`,
    ),
  convertRule: (projectId: string, ruleId: string) =>
    call<{ id: string; name: string }>(
      'POST',
      `${projectPath(projectId)}/evaluation-rules/${encodeURIComponent(ruleId)}/convert`,
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
  dashboards: (id: string) => call<NumberedPage<Dashboard>>('GET', `${projectPath(id)}/dashboards?limit=100`),
  createDashboard: (
    id: string,
    body: { name: string; description?: string; defaultTimeRange?: DashboardRange },
  ) => call<Dashboard>('POST', `${projectPath(id)}/dashboards`, body),
  updateDashboard: (id: string, dashboardId: string, body: Partial<Dashboard>) =>
    call<Dashboard>('PATCH', `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}`, body),
  deleteDashboard: (id: string, dashboardId: string) =>
    call<{ message: string }>('DELETE', `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}`),
  dashboardView: (id: string, dashboardId: string) =>
    call<DashboardView>('GET', `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/view`),
  tileData: (
    id: string,
    dashboardId: string,
    placementId: string,
    range: { fromTimestamp: string; toTimestamp: string },
  ) =>
    call<TileData>(
      'POST',
      `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/widgets/${encodeURIComponent(placementId)}/data`,
      range,
    ),
  previewWidget: (id: string, widget: CreateWidget, range: { fromTimestamp: string; toTimestamp: string }) =>
    call<TileData>('POST', `${projectPath(id)}/dashboard-widgets/preview`, { ...range, widget }),
  createWidget: (id: string, widget: CreateWidget) =>
    call<WidgetDefinition & { id: string }>('POST', `${projectPath(id)}/dashboard-widgets`, widget),
  placeWidget: (id: string, dashboardId: string, widgetId: string) =>
    call<Placement>('POST', `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/placements`, {
      type: 'widget',
      widgetId,
    }),
  movePlacement: (id: string, dashboardId: string, placementId: string, change: PlacementChange) =>
    call<Placement>(
      'PATCH',
      `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/placements/${encodeURIComponent(placementId)}`,
      change,
    ),
  removePlacement: (id: string, dashboardId: string, placementId: string) =>
    call<{ message: string }>(
      'DELETE',
      `${projectPath(id)}/dashboards/${encodeURIComponent(dashboardId)}/placements/${encodeURIComponent(placementId)}`,
    ),
  prompts: (id: string) =>
    call<{ data: PromptSummary[]; total: number }>('GET', `${projectPath(id)}/prompts`),
  promptVersions: (id: string, name: string) =>
    call<{ data: PromptVersion[] }>('GET', `${projectPath(id)}/prompt-versions?${queryString({ name })}`),
  createPrompt: (id: string, body: Record<string, unknown>) =>
    call<PromptVersion>('POST', `${projectPath(id)}/prompts`, body),
  movePromptLabels: (id: string, body: { name: string; version: number; newLabels: string[] }) =>
    call<PromptVersion>('POST', `${projectPath(id)}/prompt-labels`, body),
  runPlayground: (id: string, body: Record<string, unknown>) =>
    call<PlaygroundRun>('POST', `${projectPath(id)}/playground`, body),
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
  addComment: (id: string, comment: { objectType: string; objectId: string; content: string }) =>
    call<{ id: string }>('POST', `${projectPath(id)}/comments`, comment),
};
