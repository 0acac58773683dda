/** The rule form: target, evaluator, sampling, delay, filter, and the variable mapping previewed live. */
import { useMemo, useState } from 'react';
import { Choice, ErrorAlert, Input } from '../../shared/fields.tsx';
import {
  type ColumnKind,
  type FilterCondition,
  formatFilters,
  parseFilterText,
} from '../../shared/filter-syntax.ts';
import { formatTime } from '../../shared/format.ts';
import { useDebounced, useWrite } from '../../shared/hooks.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { type EvaluationRule, type Evaluator, evaluationApi, type MappingEntry } from './api.ts';

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

interface MappingRow {
  source: string;
  jsonPath: string;
}

export function RuleForm({
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
