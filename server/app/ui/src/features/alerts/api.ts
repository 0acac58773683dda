/** A project's alert rules, their history, and the channels they notify. */
import { call, type NumberedPage, projectPath, ruleCalls } from '../../shared/api.ts';

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

const alertRules = ruleCalls<AlertRule>('alert-rules');

export const alertsApi = {
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
};
