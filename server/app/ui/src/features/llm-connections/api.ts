/** A project's LLM connections: the settings page keeps them; evaluators and the playground pick one. */
import type {
  publicConnection,
  UpsertConnectionRequest,
} from '../../../../../features/llm-connections/connections.ts';
import { call, type NumberedPage, projectPath } from '../../shared/api.ts';

export type LlmConnection = ReturnType<typeof publicConnection>;

export const llmConnectionsApi = {
  llmConnections: (id: string) =>
    call<NumberedPage<LlmConnection>>('GET', `${projectPath(id)}/llm-connections?limit=100`),
  saveLlmConnection: (id: string, body: UpsertConnectionRequest) =>
    call<LlmConnection>('PUT', `${projectPath(id)}/llm-connections`, body),
  deleteLlmConnection: (id: string, connectionId: string) =>
    call<{ message: string }>(
      'DELETE',
      `${projectPath(id)}/llm-connections/${encodeURIComponent(connectionId)}`,
    ),
};
