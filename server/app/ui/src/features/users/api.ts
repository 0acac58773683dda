/** The signed-in user: the session the shell loads, sign-in and out, the account, invitations to accept. */
import type { SessionSummary as UserSession } from '../../../../../features/users/sessions.ts';
import { call } from '../../shared/api.ts';
import type { Project } from '../projects/api.ts';

export type { UserSession };

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

export interface InvitationView {
  email: string;
  role: Project['role'];
  projectName: string;
  existingUser: boolean;
}

export const usersApi = {
  session: () => call<SessionInfo>('GET', '/api/ui/session'),
  login: (email: string, password: string) =>
    call<SessionInfo>('POST', '/api/ui/auth/login', { email, password }),
  logout: () => call<{ ok: boolean }>('POST', '/api/ui/auth/logout'),
  changePassword: (currentPassword: string, newPassword: string) =>
    call<{ ok: boolean; csrfToken: string }>('POST', '/api/ui/auth/password', {
      currentPassword,
      newPassword,
    }),
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
  sessions: () => call<{ data: UserSession[] }>('GET', '/api/ui/account/sessions'),
  revokeSession: (sessionId: string) =>
    call<{ ok: boolean }>('DELETE', `/api/ui/account/sessions/${encodeURIComponent(sessionId)}`),
  revokeOtherSessions: () => call<{ revoked: number }>('DELETE', '/api/ui/account/sessions'),
  setV4Preview: (enabled: boolean) =>
    call<{ readPath: ReadPathChoice }>('PUT', '/api/ui/preferences/v4-preview', { enabled }),
};
