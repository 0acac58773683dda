/** The evaluators: a row with its versions, and the form that makes one, blank or from a template. */
import { useState } from 'react';
import { Choice, ErrorAlert, Input, useForm } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useToggled, useWrite } from '../../shared/hooks.ts';
import { DetailRow, ShowHide } from '../../shared/lists.tsx';
import type { LlmConnection } from '../llm-connections/api.ts';
import { type Evaluator, evaluationApi } from './api.ts';

const SCORE_TYPES = ['NUMERIC', 'BOOLEAN', 'CATEGORICAL'] as const;

export function EvaluatorRow({
  projectId,
  evaluator: e,
  onUse,
}: {
  projectId: string;
  evaluator: Evaluator;
  onUse: (e: Evaluator) => void;
}) {
  const {
    shown: versions,
    error,
    toggle,
  } = useToggled(() => evaluationApi.evaluatorVersions(projectId, e.id).then((v) => v.data));
  return (
    <>
      <tr>
        <td>{e.name}</td>
        <td>{e.managed ? 'Managed template' : 'Project'}</td>
        <td className="num">v{e.version}</td>
        <td>{e.outputDefinition.dataType}</td>
        <td>{e.modelConfig ? `${e.modelConfig.provider} / ${e.modelConfig.model}` : '–'}</td>
        <td>{e.variables.join(', ')}</td>
        <td className="num">{e.evaluationRuleCount}</td>
        <td>
          <button type="button" onClick={() => onUse(e)}>
            {e.managed ? 'Use template' : 'New version'}
          </button>{' '}
          {!e.managed && (
            <ShowHide what="Versions" shown={versions !== undefined} onClick={() => void toggle()} />
          )}
          {error && <span className="error"> {error}</span>}
        </td>
      </tr>
      {versions && (
        <DetailRow columns={8}>
          <ol aria-label={`Versions of ${e.name}`}>
            {versions.map((v) => (
              <li key={v.version}>
                v{v.version} · {formatTime(v.createdAt)} · {v.outputDefinition.dataType} ·{' '}
                {v.modelConfig ? `${v.modelConfig.provider} / ${v.modelConfig.model}` : 'no model'}
                <pre className="rendered-prompt">{v.prompt}</pre>
              </li>
            ))}
          </ol>
        </DetailRow>
      )}
    </>
  );
}

/** An output definition of `type` that keeps what the template said where it still applies. */
function outputOf(
  type: (typeof SCORE_TYPES)[number],
  scoreDescription: string,
  reasoning: string,
  categories: string,
  start?: Evaluator['outputDefinition'],
): Evaluator['outputDefinition'] {
  const reasoningField = { description: reasoning };
  if (type === 'CATEGORICAL')
    return {
      dataType: 'CATEGORICAL',
      reasoning: reasoningField,
      score: {
        description: scoreDescription,
        categories: categories
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean),
        shouldAllowMultipleMatches: false,
      },
    };
  if (type === 'BOOLEAN')
    return { dataType: 'BOOLEAN', reasoning: reasoningField, score: { description: scoreDescription } };
  const bounds =
    start?.dataType === 'NUMERIC' ? { minValue: start.score.minValue, maxValue: start.score.maxValue } : {};
  return {
    dataType: 'NUMERIC',
    reasoning: reasoningField,
    score: {
      description: scoreDescription,
      ...(bounds.minValue === undefined ? {} : { minValue: bounds.minValue }),
      ...(bounds.maxValue === undefined ? {} : { maxValue: bounds.maxValue }),
    },
  };
}

export function EvaluatorForm({
  projectId,
  templates,
  start,
  connections,
  onCreated,
}: {
  projectId: string;
  templates: Evaluator[];
  start: Evaluator | undefined;
  connections: LlmConnection[];
  onCreated: () => void;
}) {
  const out = start?.outputDefinition;
  const { form, bind } = useForm({
    name: start?.name ?? '',
    prompt: start?.prompt ?? '',
    scoreType: (out?.dataType ?? 'NUMERIC') as (typeof SCORE_TYPES)[number],
    scoreDescription: out?.score.description ?? '',
    reasoning: out?.reasoning.description ?? 'One short sentence on why.',
    categories: out?.dataType === 'CATEGORICAL' ? out.score.categories.join(', ') : '',
    provider: start?.modelConfig?.provider ?? connections[0]?.provider ?? '',
    model: start?.modelConfig?.model ?? connections[0]?.customModels[0] ?? '',
  });
  const [created, setCreated] = useState<string | undefined>();
  const variables = [
    ...new Set([...form.prompt.matchAll(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g)].map((m) => m[1])),
  ];
  const models = connections.find((c) => c.provider === form.provider)?.customModels ?? [];
  const { error, onSubmit } = useWrite(async () => {
    const made = await evaluationApi.createEvaluator(projectId, {
      name: form.name,
      type: 'llm_as_judge',
      prompt: form.prompt,
      outputDefinition: outputOf(form.scoreType, form.scoreDescription, form.reasoning, form.categories, out),
      modelConfig: { provider: form.provider, model: form.model },
    });
    setCreated(`Created ${made.name} v${made.version}`);
    onCreated();
  });
  return (
    <form className="card" aria-label="New evaluator" onSubmit={onSubmit}>
      <h3>{start ? `New evaluator from ${start.name}` : 'New evaluator'}</h3>
      {!start && (
        <p className="muted">
          Start from a template: {templates.filter((t) => t.managed).length} managed templates are listed
          above.
        </p>
      )}
      <Input label="Name (also the score's name)" {...bind('name')} />
      <label>
        Prompt <textarea rows={5} {...bind('prompt')} />
      </label>
      <p className="muted">
        Variables: {variables.length > 0 ? variables.join(', ') : 'none ({{name}} in the prompt)'}
      </p>
      <Choice label="Score type" {...bind('scoreType')} options={SCORE_TYPES} />
      <Input label="Score description" {...bind('scoreDescription')} />
      {form.scoreType === 'CATEGORICAL' && (
        <label>
          Categories <input {...bind('categories')} placeholder="comma-separated" />
        </label>
      )}
      <Input label="Reasoning description" {...bind('reasoning')} />
      <Choice label="Connection" {...bind('provider')} options={connections.map((c) => c.provider)} />
      <label>
        Model <input {...bind('model')} list="evaluator-models" />
        <datalist id="evaluator-models">
          {models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
      </label>
      <button type="submit">Create evaluator</button>
      {created && <p role="status">{created}</p>}
      <ErrorAlert error={error} />
    </form>
  );
}
