/**
 * Spans two features: the LLM connections section comes from llm-connections, whose client
 * evaluators and the playground share.
 */
import { useLoaded } from '../../shared/hooks.ts';
import { LlmConnections } from '../llm-connections/settings-section.tsx';
import { projectsApi } from './api.ts';
import { ApiKeys } from './api-keys.tsx';
import { Masking } from './masking.tsx';
import { Members } from './members.tsx';

/**
 * A project's settings: its people for everyone in it; invitations, API keys and LLM connections for
 * owners.
 */
export function Settings({ projectId }: { projectId: string }) {
  const { data: role, error } = useLoaded(
    () => projectsApi.project(projectId).then((p) => p.project.role),
    [projectId],
  );
  if (error) return <main className="error">{error}</main>;
  if (!role) return <main className="muted">Loading…</main>;
  return (
    <main>
      <h1>Settings</h1>
      <Members projectId={projectId} owner={role === 'owner'} />
      {role === 'owner' && <ApiKeys projectId={projectId} />}
      {role === 'owner' && <LlmConnections projectId={projectId} />}
      {role === 'owner' && <Masking projectId={projectId} />}
    </main>
  );
}
