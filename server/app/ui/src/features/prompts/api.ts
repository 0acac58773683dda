/** Prompts: names with their versions, labels and tags; new versions; the playground's runs. */
import type { PromptMeta as PromptSummary } from '../../../../../features/prompts/rules.ts';
import type { Prompt as PromptVersion } from '../../../../../features/prompts/store.ts';
import { call, projectPath, queryString } from '../../shared/api.ts';

/** A prompt name with its versions, labels and tags; one stored prompt version. */
export type { PromptSummary, PromptVersion };

export interface PlaygroundRun {
  completion: string;
  usage: Record<string, number>;
  cost: Record<string, number> | null;
  latencyMs: number;
}

export const promptsApi = {
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
};
