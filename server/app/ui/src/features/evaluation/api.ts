/**
 * LLM-as-a-judge: evaluators and their versions, evaluation rules, their mapping preview and
 * execution log.
 */
import type { publicEvaluator, publicRule } from '../../../../../features/evaluation/api.ts';
import type { LoggedExecution } from '../../../../../features/evaluation/executions.ts';
import { call, type NumberedPage, projectPath, ruleCalls } from '../../shared/api.ts';
import type { ColumnKind, FilterCondition } from '../../shared/filter-syntax.ts';
import type { Score } from '../traces/api.ts';

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

const evaluationRules = ruleCalls<EvaluationRule>('evaluation-rules');

export const evaluationApi = {
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
};
