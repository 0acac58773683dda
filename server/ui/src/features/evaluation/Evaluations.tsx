/**
 * A project's LLM-as-a-judge evaluations: the evaluators (our managed templates and the project's
 * own, with their versions) and a form that starts from a template; the evaluation rules with
 * their target (trace-level rules marked Legacy: they stop at the cutover), state (a paused rule
 * says why), enable and pause; a rule form whose variable mapping is previewed live on a real
 * observation of the project, resolved by the server with the judge's own code; and each rule's
 * execution log (status, score, reasoning, the judge's trace, failures with their reason).
 */
import { useCallback, useMemo, useState } from 'react';
import { Choice, ErrorAlert, Input, useForm } from '../../shared/fields.tsx';
import {
  type ColumnKind,
  type FilterCondition,
  formatFilters,
  parseFilterText,
} from '../../shared/filter-syntax.ts';
import { formatScore, formatTime } from '../../shared/format.ts';
import { useDebounced, useLoaded, useToggled, useWrite } from '../../shared/hooks.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { DetailRow, Grid, ShowHide } from '../../shared/lists.tsx';
import { type LlmConnection, llmConnectionsApi } from '../llm-connections/api.ts';
import {
  type EvaluationRule,
  type Evaluator,
  type ExecutionLogPage,
  evaluationApi,
  type MappingEntry,
} from './api.ts';

const SCORE_TYPES = ['NUMERIC', 'BOOLEAN', 'CATEGORICAL'] as const;
const SOURCES: Record<string, readonly string[]> = {
  observation: ['input', 'output', 'metadata', 'tool_calls'],
  trace: ['input', 'output', 'metadata'],
  experiment: ['input', 'output', 'metadata', 'tool_calls', 'expected_output', 'experiment_item_metadata'],
};
const TARGETS: Record<string, string> = {
  observation: 'observation',
  experiment: 'experiment (dataset runs)',
  trace: 'trace (Legacy: stops at the cutover)',
};

type Columns = Record<'observation' | 'experiment' | 'trace', Record<string, ColumnKind>>;

export function Evaluations({ projectId }: { projectId: string }) {
  const {
    data,
    error,
    reload: load,
  } = useLoaded(
    useCallback(
      () =>
        Promise.all([
          evaluationApi.evaluators(projectId),
          evaluationApi.evaluationRules(projectId),
          llmConnectionsApi.llmConnections(projectId),
          evaluationApi.ruleFilterColumns(projectId),
        ]),
      [projectId],
    ),
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
        onCreated={load}
      />
      <h2>Rules</h2>
      <Grid
        empty={rules.length === 0 && 'No evaluation rule yet.'}
        label="Evaluation rules"
        columns={['Rule', 'Target', 'Evaluators', 'State', 'Sampling', 'Delay', 'Filter', '']}
      >
        {rules.map((r) => (
          <RuleRow key={r.id} projectId={projectId} rule={r} onEdit={setEditing} onChange={load} />
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
          void load();
        }}
      />
    </main>
  );
}

function EvaluatorRow({
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

const stateOf = (r: EvaluationRule) =>
  r.status === 'active' ? 'Active' : r.status === 'paused' ? `Paused: ${r.pausedReason}` : 'Inactive';

function RuleRow({
  projectId,
  rule: r,
  onEdit,
  onChange,
}: {
  projectId: string;
  rule: EvaluationRule;
  onEdit: (r: EvaluationRule) => void;
  onChange: () => void;
}) {
  const [log, setLog] = useState<ExecutionLogPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const setEnabled = (enabled: boolean) =>
    evaluationApi
      .updateEvaluationRule(projectId, r.id, { enabled })
      .then(onChange, (e: Error) => setError(e.message));
  const showLog = () =>
    evaluationApi.executions(projectId, r.id).then(
      (p) => setLog(p),
      (e: Error) => setError(e.message),
    );
  return (
    <>
      <tr>
        <td>{r.name}</td>
        <td>
          {r.target}
          {r.legacy && (
            <span className="badge legacy" title="Trace-level evaluators stop at the cutover to events_only">
              {' '}
              Legacy
            </span>
          )}
        </td>
        <td>{r.evaluators.map((e) => e.evaluator.name).join(', ')}</td>
        <td className={`rule-state rule-${r.status}`}>
          {stateOf(r)}
          {r.pausedMessage && <div className="muted">{r.pausedMessage}</div>}
        </td>
        <td className="num">{r.sampling}</td>
        <td className="num">{r.delay / 1000} s</td>
        <td>
          <code>{formatFilters(r.filter as FilterCondition[]) || 'every row'}</code>
        </td>
        <td>
          {r.status === 'active' ? (
            <button type="button" onClick={() => void setEnabled(false)}>
              Pause
            </button>
          ) : (
            <button type="button" onClick={() => void setEnabled(true)}>
              Enable
            </button>
          )}{' '}
          <button type="button" onClick={() => onEdit(r)}>
            Edit
          </button>{' '}
          <ShowHide
            what="Executions"
            shown={log !== undefined}
            onClick={() => (log ? setLog(undefined) : void showLog())}
          />
          {error && (
            <span className="error" role="alert">
              {' '}
              {error}
            </span>
          )}
        </td>
      </tr>
      {log && (
        <DetailRow columns={8}>
          <ExecutionLog projectId={projectId} rule={r} log={log} onRefresh={showLog} />
        </DetailRow>
      )}
    </>
  );
}

function ExecutionLog({
  projectId,
  rule,
  log,
  onRefresh,
}: {
  projectId: string;
  rule: EvaluationRule;
  log: ExecutionLogPage;
  onRefresh: () => void;
}) {
  const executions = log.data;
  const { waiting, holdsAt } = log.queue;
  return (
    <div>
      <button type="button" onClick={onRefresh}>
        Refresh executions
      </button>
      {waiting > 0 && (
        <p className="muted" role="status">
          {waiting} waiting for the judge.
          {waiting >= holdsAt &&
            ` The rule's scan holds while ${holdsAt} wait: what arrives meanwhile is judged once the judge catches up, nothing is skipped.`}
        </p>
      )}
      <Grid
        empty={
          executions.length === 0 &&
          'No execution yet: the worker judges what arrives after the rule is active.'
        }
        label={`Executions of ${rule.name}`}
        columns={[
          'Queued',
          rule.target === 'trace' ? 'Trace' : 'Observation',
          'Status',
          'Attempts',
          'Score',
          'Reasoning',
          'Judge',
        ]}
      >
        {executions.map((x) => (
          <tr key={x.id}>
            <td>{formatTime(x.createdAt)}</td>
            <td>
              <Link href={traceHref(projectId, x.traceId)}>{x.observationId}</Link>
            </td>
            <td className={`execution-${x.status.toLowerCase()}`}>
              {x.status}
              {x.error && <div className="error">{x.error}</div>}
            </td>
            <td className="num">{x.attempts}</td>
            <td>{x.score ? formatScore(x.score.value) : '–'}</td>
            <td>{x.score?.comment ?? ''}</td>
            <td>
              {x.score?.executionTraceId ? (
                <Link href={traceHref(projectId, x.score.executionTraceId)}>judge trace</Link>
              ) : (
                '–'
              )}
            </td>
          </tr>
        ))}
      </Grid>
    </div>
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

function EvaluatorForm({
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

interface MappingRow {
  source: string;
  jsonPath: string;
}

function RuleForm({
  projectId,
  evaluators,
  columns,
  editing,
  onSaved,
}: {
  projectId: string;
  evaluators: Evaluator[];
  columns: Columns;
  editing: EvaluationRule | undefined;
  onSaved: () => void;
}) {
  const [name, setName] = useState(editing?.name ?? '');
  const [target, setTarget] = useState<string>(editing?.target ?? 'observation');
  const [evaluatorName, setEvaluatorName] = useState(
    editing?.evaluator?.name ?? evaluators.find((e) => !e.managed)?.name ?? '',
  );
  const [sampling, setSampling] = useState(String(editing?.sampling ?? 1));
  // In seconds, as the reference's form shows it; the API takes milliseconds (10 s by default).
  const [delaySeconds, setDelaySeconds] = useState(String((editing?.delay ?? 10_000) / 1000));
  const [filterText, setFilterText] = useState(formatFilters((editing?.filter ?? []) as FilterCondition[]));
  const [enabled, setEnabled] = useState(editing?.enabled ?? true);
  const [mapping, setMapping] = useState<Record<string, MappingRow>>(() =>
    Object.fromEntries(
      (editing?.mapping ?? []).flatMap((m) =>
        m.source
          ? [[m.variable, { source: m.source, jsonPath: 'jsonPath' in m ? (m.jsonPath ?? '') : '' }]]
          : [],
      ),
    ),
  );

  const evaluator = evaluators.find((e) => e.name === evaluatorName);
  const sources = SOURCES[target] ?? [];
  const variables = evaluator?.variables ?? [];
  const rowOf = (v: string): MappingRow =>
    mapping[v] ?? { source: v === 'output' ? 'output' : 'input', jsonPath: '' };
  const entries: MappingEntry[] = variables.map((v) => ({
    variable: v,
    source: rowOf(v).source,
    ...(rowOf(v).jsonPath.trim() ? { jsonPath: rowOf(v).jsonPath.trim() } : {}),
  }));
  const filterColumns = columns[target as keyof Columns] ?? columns.observation;
  const parsed = parseFilterText(filterText, filterColumns);
  const previewKey = JSON.stringify([target, evaluatorName, entries, parsed.ok ? parsed.filters : null]);

  // The live preview: the server resolves the mapping on a real observation matching the filters.
  const fetchPreview = useMemo(() => {
    const [t, e, m, filter] = JSON.parse(previewKey) as [
      string,
      string,
      MappingEntry[],
      FilterCondition[] | null,
    ];
    if (!e || filter === null) return undefined;
    return () => evaluationApi.previewMapping(projectId, { target: t, filter, evaluator: e, mapping: m });
  }, [previewKey, projectId]);
  const { data: preview, error: previewError } = useDebounced(fetchPreview, 300);

  const { error, onSubmit } = useWrite(async () => {
    if (!parsed.ok) throw new Error(`filter: ${parsed.error}`);
    const body = {
      name,
      target,
      enabled,
      sampling: Number(sampling),
      delay: Math.round(Number(delaySeconds) * 1000),
      filter: parsed.filters,
      evaluators: [{ evaluator: { name: evaluatorName, type: 'llm_as_judge' }, mapping: entries }],
    };
    if (editing) await evaluationApi.updateEvaluationRule(projectId, editing.id, body);
    else await evaluationApi.createEvaluationRule(projectId, body);
    onSaved();
  });

  return (
    <form
      className="card"
      aria-label={editing ? `Edit rule ${editing.name}` : 'New evaluation rule'}
      onSubmit={onSubmit}
    >
      <h3>{editing ? `Edit ${editing.name}` : 'New rule'}</h3>
      <Input label="Rule name" value={name} onChange={(e) => setName(e.target.value)} />
      <Choice
        label="Target"
        value={target}
        onChange={(e) => setTarget(e.target.value)}
        options={Object.keys(TARGETS)}
        labelOf={(t) => TARGETS[t] ?? t}
      />
      <label>
        Evaluator{' '}
        <select
          aria-label="Evaluator"
          value={evaluatorName}
          onChange={(e) => setEvaluatorName(e.target.value)}
        >
          <option value="">choose…</option>
          {evaluators.map((ev) => (
            <option key={ev.id} value={ev.name}>
              {ev.name}
              {ev.managed ? ' (template, no model)' : ` v${ev.version}`}
            </option>
          ))}
        </select>
      </label>
      <label>
        Sampling <input value={sampling} onChange={(e) => setSampling(e.target.value)} inputMode="decimal" />
      </label>
      <label title="Time after a matching observation arrives before it is judged, so that its trace is complete">
        Delay (seconds){' '}
        <input
          type="number"
          min={0}
          step="any"
          value={delaySeconds}
          onChange={(e) => setDelaySeconds(e.target.value)}
        />
      </label>
      <label>
        Filter{' '}
        <input
          value={filterText}
          onChange={(e) => setFilterText(e.target.value)}
          placeholder={
            target === 'experiment'
              ? 'datasetId any of ["<dataset id>"] (empty: every experiment item)'
              : 'type any of ["GENERATION"] AND name = "qa"'
          }
          size={60}
        />
      </label>
      {!parsed.ok && <p className="error">filter: {parsed.error}</p>}
      <label>
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
      </label>
      <fieldset aria-label="Variable mapping">
        <legend>Variable mapping</legend>
        {variables.length === 0 && <p className="muted">Choose an evaluator to map its variables.</p>}
        {variables.map((v) => (
          <div key={v} className="mapping-row">
            <code>{`{{${v}}}`}</code>{' '}
            <label>
              Source of {v}{' '}
              <select
                value={rowOf(v).source}
                onChange={(e) => setMapping((m) => ({ ...m, [v]: { ...rowOf(v), source: e.target.value } }))}
              >
                {sources.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </label>{' '}
            <label>
              JSONPath of {v}{' '}
              <input
                value={rowOf(v).jsonPath}
                placeholder="$ (whole value)"
                onChange={(e) =>
                  setMapping((m) => ({ ...m, [v]: { ...rowOf(v), jsonPath: e.target.value } }))
                }
              />
            </label>
          </div>
        ))}
      </fieldset>
      <section aria-label="Mapping preview" className="mapping-preview">
        <h4>Preview</h4>
        {previewError && <p className="error">{previewError}</p>}
        {preview && !preview.sample && (
          <p className="muted">No observation of this project matches the filter yet.</p>
        )}
        {preview?.sample && (
          <>
            <p>
              On {target} <Link href={traceHref(projectId, preview.sample.traceId)}>{preview.sample.id}</Link>{' '}
              <span className="muted">({formatTime(preview.sample.startTime)})</span>
            </p>
            <dl>
              {preview.variables.map((v) => (
                <div key={v.variable}>
                  <dt>{v.variable}</dt>
                  <dd data-variable={v.variable}>
                    {v.problem ? (
                      <span className="error">{v.problem}</span>
                    ) : (
                      <code>{typeof v.value === 'string' ? v.value : JSON.stringify(v.value)}</code>
                    )}
                  </dd>
                </div>
              ))}
            </dl>
            <pre className="rendered-prompt">{preview.prompt}</pre>
          </>
        )}
      </section>
      <button type="submit">{editing ? 'Save rule' : 'Create rule'}</button>
      <ErrorAlert error={error} />
    </form>
  );
}
