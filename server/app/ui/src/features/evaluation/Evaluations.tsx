/**
 * A project's LLM-as-a-judge evaluations: the evaluators (our managed templates and the project's
 * own, with their versions) and a form that starts from a template; the evaluation rules with
 * their target (trace-level rules marked Legacy: they stop at the cutover), state (a paused rule
 * says why), enable and pause; a rule form whose variable mapping is previewed live on a real
 * observation of the project, resolved by the server with the judge's own code; and each rule's
 * execution log (status, score, reasoning, the judge's trace, failures with their reason).
 */
import { useState } from 'react';
import { useLoaded } from '../../shared/hooks.ts';
import { Link } from '../../shared/link.tsx';
import { Grid } from '../../shared/lists.tsx';
import { llmConnectionsApi } from '../llm-connections/api.ts';
import { type EvaluationRule, type Evaluator, evaluationApi } from './api.ts';
import { EvaluatorForm, EvaluatorRow } from './evaluators.tsx';
import { RuleForm } from './rule-form.tsx';
import { RuleRow } from './rule-list.tsx';

export function Evaluations({ projectId }: { projectId: string }) {
  const { data, error, reload } = useLoaded(
    () =>
      Promise.all([
        evaluationApi.evaluators(projectId),
        evaluationApi.evaluationRules(projectId),
        llmConnectionsApi.llmConnections(projectId),
        evaluationApi.ruleFilterColumns(projectId),
      ]),
    [projectId],
  );
  const [template, setTemplate] = useState<Evaluator | undefined>();
  const [editing, setEditing] = useState<EvaluationRule | undefined>();
  // A new blank rule form after each save.
  const [saves, setSaves] = useState(0);

  if (!data) return <main className={error ? 'error' : 'muted'}>{error ?? 'Loading…'}</main>;
  const [{ data: evaluators }, { data: rules }, { data: connections }, columns] = data;
  const settings = `/project/${encodeURIComponent(projectId)}/settings`;
  return (
    <main>
      <h1>Evaluations</h1>
      {error && <p className="error">{error}</p>}
      <h2>Evaluators</h2>
      <Grid
        label="Evaluators"
        columns={['Evaluator', 'Kind', 'Version', 'Score', 'Model', 'Variables', 'Rules', '']}
      >
        {evaluators.map((e) => (
          <EvaluatorRow key={e.id} projectId={projectId} evaluator={e} onUse={setTemplate} />
        ))}
      </Grid>
      {connections.length === 0 && (
        <p className="muted">
          No LLM connection yet: add one in the <Link href={settings}>project settings</Link> before making an
          evaluator.
        </p>
      )}
      <EvaluatorForm
        key={template?.id ?? 'blank'}
        projectId={projectId}
        templates={evaluators}
        start={template}
        connections={connections}
        onCreated={reload}
      />
      <h2>Rules</h2>
      <Grid
        empty={rules.length === 0 && 'No evaluation rule yet.'}
        label="Evaluation rules"
        columns={['Rule', 'Target', 'Evaluators', 'State', 'Sampling', 'Delay', 'Filter', '']}
      >
        {rules.map((r) => (
          <RuleRow key={r.id} projectId={projectId} rule={r} onEdit={setEditing} onChange={reload} />
        ))}
      </Grid>
      <RuleForm
        key={editing?.id ?? `new-${saves}`}
        projectId={projectId}
        evaluators={evaluators}
        columns={columns}
        editing={editing}
        onSaved={() => {
          setEditing(undefined);
          setSaves((n) => n + 1);
          void reload();
        }}
      />
    </main>
  );
}
