/** Organizations and projects, and a project's settings: API keys, members, retention, masking rules. */
import type { ApiKeySummary } from '../../../../../features/projects/keys.ts';
import type { OrganizationAccess as Organization } from '../../../../../features/projects/user-organizations.ts';
import { call, projectPath, ruleCalls } from '../../shared/api.ts';
import type { ColumnKind } from '../../shared/filter-syntax.ts';

export type { Organization };

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

export interface ProjectInfo {
  project: Project;
  columns: Record<string, ColumnKind>;
  sortColumns: string[];
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

const maskingRules = ruleCalls<MaskingRule>('masking-rules');

export const projectsApi = {
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
  setRetention: (id: string, retentionDays: number | null) =>
    call<{ project: Project }>('PUT', `${projectPath(id)}/retention`, { retentionDays }),
  maskingRules: maskingRules.list,
  createMaskingRule: maskingRules.create,
  updateMaskingRule: maskingRules.update,
  deleteMaskingRule: (id: string, ruleId: string) =>
    call<{ message: string }>('DELETE', `${projectPath(id)}/masking-rules/${encodeURIComponent(ruleId)}`),
  previewMasking: (id: string) =>
    call<MaskingPreview>('POST', `${projectPath(id)}/masking-preview`, { limit: 100 }),
};
