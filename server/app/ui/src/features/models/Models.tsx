/**
 * A project's model definitions (project settings): the project's own and the built-in ones with
 * their pattern, start date, unit, prices per usage type by tier and tokenizer; create, edit and
 * delete the project's own; "edit" on a built-in one creates the project's own override of it, as
 * the reference does. "Test a model name" asks the server which definition ingestion would price
 * that name with now.
 */
import { type FormEvent, useState } from 'react';
import { Choice, Input, useForm } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useLoaded, useWrite } from '../../shared/hooks.ts';
import { Grid } from '../../shared/lists.tsx';
import { projectsApi } from '../projects/api.ts';
import { type ModelDefinition, modelsApi, type PricingTier } from './api.ts';
import { EMPTY_FORM, formOf, type ModelForm, requestOf } from './model-form.ts';

const UNITS = ['TOKENS', 'CHARACTERS', 'MILLISECONDS', 'SECONDS', 'IMAGES', 'REQUESTS'] as const;
const TOKENIZERS = ['', 'openai', 'claude'] as const;

/** What the form edits: a new definition, one of the project's own, or an override of a built-in. */
type Editing =
  | { kind: 'new' }
  | { kind: 'edit'; model: ModelDefinition }
  | { kind: 'override'; model: ModelDefinition };

export function Models({ projectId }: { projectId: string }) {
  const { data, error, reload, act } = useLoaded(
    () =>
      Promise.all([modelsApi.models(projectId), projectsApi.project(projectId)]).then(([m, info]) => ({
        models: m.data,
        canWrite: info.project.role !== 'viewer',
      })),
    [projectId],
  );
  const { models, canWrite = false } = data ?? {};
  const [editing, setEditing] = useState<Editing>({ kind: 'new' });
  const [matchedId, setMatchedId] = useState<string | null>(null);

  const remove = (m: ModelDefinition) =>
    act(
      modelsApi.deleteModel(projectId, m.id).then(() => {
        if (editing.kind !== 'new' && editing.model.id === m.id) setEditing({ kind: 'new' });
      }),
    );

  if (!models) return <main className={error ? 'error' : 'muted'}>{error ?? 'Loading…'}</main>;
  return (
    <main>
      <h1>Models</h1>
      <p className="muted">
        Ingestion prices a generation without a sent cost with the definition whose pattern matches its model
        name: the project's own before the built-in ones, then the latest start date.
      </p>
      <MatchTest projectId={projectId} onMatched={setMatchedId} />
      {error && <p className="error">{error}</p>}
      <Grid
        label="Model definitions"
        columns={[
          'Model',
          'Owner',
          'Match pattern',
          'Start date',
          'Unit',
          'Prices (USD per unit)',
          'Tokenizer',
          '',
        ]}
      >
        {models.map((m) => (
          <tr key={m.id} className={m.id === matchedId ? 'matched' : undefined}>
            <td>{m.modelName}</td>
            <td>{m.isLangfuseManaged ? 'Built-in' : 'Project'}</td>
            <td>
              <code>{m.matchPattern}</code>
            </td>
            <td>{m.startDate ? formatTime(m.startDate) : '—'}</td>
            <td>{m.unit ?? '—'}</td>
            <td>
              <Tiers tiers={m.pricingTiers} />
            </td>
            <td>{m.tokenizerId ?? '—'}</td>
            <td>
              {canWrite &&
                (m.isLangfuseManaged ? (
                  <button type="button" onClick={() => setEditing({ kind: 'override', model: m })}>
                    Override
                  </button>
                ) : (
                  <>
                    <button type="button" onClick={() => setEditing({ kind: 'edit', model: m })}>
                      Edit
                    </button>{' '}
                    <button type="button" onClick={() => void remove(m)}>
                      Delete
                    </button>
                  </>
                ))}
            </td>
          </tr>
        ))}
      </Grid>
      {canWrite && (
        <ModelEditor
          key={editing.kind === 'new' ? 'new' : `${editing.kind}-${editing.model.id}`}
          projectId={projectId}
          editing={editing}
          onDone={async () => {
            setEditing({ kind: 'new' });
            await reload();
          }}
        />
      )}
    </main>
  );
}

function Tiers({ tiers }: { tiers: PricingTier[] }) {
  return (
    <ul className="tiers">
      {[...tiers]
        .sort((a, b) => a.priority - b.priority)
        .map((t) => (
          <li key={t.id ?? t.name}>
            <strong>{t.name}</strong>
            {t.isDefault ? '' : ` (when ${t.conditions.map((c) => conditionText(c)).join(' and ')})`}:{' '}
            {Object.entries(t.prices)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}
          </li>
        ))}
    </ul>
  );
}

function conditionText(c: Record<string, unknown>): string {
  if ('usageDetailPattern' in c) return `usage ${c['usageDetailPattern']} ${c['operator']} ${c['value']}`;
  return `${c['source']}.${c['key']} in ${(c['values'] as string[]).join('|')}`;
}

function MatchTest({ projectId, onMatched }: { projectId: string; onMatched: (id: string | null) => void }) {
  const [name, setName] = useState('');
  const [result, setResult] = useState<string | undefined>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setResult(undefined);
    try {
      const r = await modelsApi.matchModel(projectId, name);
      onMatched(r.model?.id ?? null);
      setResult(
        r.model
          ? `${r.name} matches ${r.model.modelName} (${r.model.isLangfuseManaged ? 'built-in' : 'project'}, pattern ${r.model.matchPattern})`
          : `${r.name} matches no definition: its generations get no computed cost`,
      );
    } catch (err) {
      onMatched(null);
      setResult((err as Error).message);
    }
  };
  return (
    <form className="card" aria-label="Test a model name" onSubmit={(e) => void submit(e)}>
      <Input label="Model name" value={name} onChange={(e) => setName(e.target.value)} />{' '}
      <button type="submit">Test</button>
      {result && <p role="status">{result}</p>}
    </form>
  );
}

function ModelEditor({
  projectId,
  editing,
  onDone,
}: {
  projectId: string;
  editing: Editing;
  onDone: () => Promise<void>;
}) {
  const { form, bind } = useForm<ModelForm>(editing.kind === 'new' ? EMPTY_FORM : formOf(editing.model));
  const title =
    editing.kind === 'new'
      ? 'New model'
      : editing.kind === 'edit'
        ? `Edit ${editing.model.modelName}`
        : `Override ${editing.model.modelName}`;
  const { error, onSubmit } = useWrite(async () => {
    const body = requestOf(form, editing.kind === 'new' ? undefined : editing.model.tokenizerConfig);
    if (editing.kind === 'edit') await modelsApi.updateModel(projectId, editing.model.id, body);
    else await modelsApi.createModel(projectId, body);
    await onDone();
  });
  return (
    <form className="card" aria-label={title} onSubmit={onSubmit}>
      <h3>{title}</h3>
      {editing.kind === 'override' && (
        <p className="muted">
          Built-in definitions cannot change: saving creates the project's own, which wins.
        </p>
      )}
      <Input label="Model name" {...bind('modelName')} />
      <Input label="Match pattern" {...bind('matchPattern')} />
      <Input label="Start date" {...bind('startDate')} />
      <Choice label="Unit" {...bind('unit')} options={UNITS} />
      <Choice
        label="Tokenizer"
        {...bind('tokenizerId')}
        options={TOKENIZERS}
        labelOf={(t) => (t === '' ? 'none' : t)}
      />
      <label>
        Prices per usage type <textarea rows={4} {...bind('prices')} />
      </label>
      <label>
        Other tiers (JSON) <textarea rows={3} {...bind('otherTiers')} />
      </label>
      <button type="submit">{editing.kind === 'edit' ? 'Save' : 'Create model'}</button>
      {editing.kind !== 'new' && (
        <button type="button" onClick={() => void onDone()}>
          Cancel
        </button>
      )}
      {error && <p className="error">{error}</p>}
    </form>
  );
}
