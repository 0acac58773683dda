/**
 * The settings page's masking section: the masking API is a project setting, so its calls are in
 * projects/api.ts.
 */
import { useState } from 'react';
import { Check, Choice, ErrorAlert, Input, useForm } from '../../shared/fields.tsx';
import { useLoaded, useWrite } from '../../shared/hooks.ts';
import { Grid } from '../../shared/lists.tsx';
import { type MaskingPreview, projectsApi } from './api.ts';

const DETECTORS = ['email', 'card_number', 'api_key', 'iban', 'phone_number', 'custom'] as const;

/**
 * Masking rules: what ingestion replaces in inputs, outputs and metadata before storing anything
 * (server/features/masking/), with a dry run over the project's most recent observations.
 */
export function Masking({ projectId }: { projectId: string }) {
  const { data, error, act, reload } = useLoaded(() => projectsApi.maskingRules(projectId), [projectId]);
  const rules = data?.data ?? [];
  const [preview, setPreview] = useState<MaskingPreview | undefined>();
  const { form, setForm, bind, check } = useForm({
    name: '',
    detector: 'email' as (typeof DETECTORS)[number],
    pattern: '',
    replacement: '',
    datasetItems: false,
  });
  const { error: createError, onSubmit } = useWrite(async () => {
    await projectsApi.createMaskingRule(projectId, {
      name: form.name,
      detector: form.detector,
      ...(form.detector === 'custom' ? { pattern: form.pattern } : {}),
      ...(form.replacement ? { replacement: form.replacement } : {}),
      datasetItems: form.datasetItems,
    });
    setForm((f) => ({ ...f, name: '', pattern: '', replacement: '' }));
    await reload();
  });
  return (
    <section>
      <h2>Masking</h2>
      <p className="muted">
        Matches are replaced before anything is stored, on every ingestion path. Other replicas apply a change
        within 5 seconds.
      </p>
      <ErrorAlert error={error} />
      <Grid
        label="Masking rules"
        columns={['Name', 'Detects', 'Replacement', 'Dataset items', 'Enabled', '']}
      >
        {rules.map((r) => (
          <tr key={r.id}>
            <td>{r.name}</td>
            <td>{r.detector === 'custom' ? <code>{r.pattern}</code> : r.detector}</td>
            <td>{r.replacement ?? 'default'}</td>
            <td>{r.datasetItems ? 'yes' : 'no'}</td>
            <td>
              <input
                type="checkbox"
                aria-label={`Enable ${r.name}`}
                checked={r.enabled}
                onChange={(e) =>
                  void act(projectsApi.updateMaskingRule(projectId, r.id, { enabled: e.target.checked }))
                }
              />
            </td>
            <td>
              <button type="button" onClick={() => void act(projectsApi.deleteMaskingRule(projectId, r.id))}>
                Delete {r.name}
              </button>
            </td>
          </tr>
        ))}
      </Grid>
      <form className="card" aria-label="New masking rule" onSubmit={onSubmit}>
        <h3>New rule</h3>
        <Input label="Rule name" {...bind('name')} />
        <Choice label="Detector" {...bind('detector')} options={DETECTORS} />
        {form.detector === 'custom' && <Input label="RE2 pattern" {...bind('pattern')} />}
        <Input label="Replacement" {...bind('replacement')} placeholder="the detector's default" />
        <Check label="Also mask dataset items" {...check('datasetItems')} />
        <button type="submit">Create masking rule</button>
        <ErrorAlert error={createError} />
      </form>
      <button type="button" onClick={() => void projectsApi.previewMasking(projectId).then(setPreview)}>
        Preview on recent observations
      </button>
      {preview && (
        <div role="status" aria-label="Masking preview">
          <p>
            {preview.observations.length} of {preview.scanned} recent observations would change.
          </p>
          <ul>
            {preview.observations.map((o) => (
              <li key={o.id}>
                <code>{o.id}</code>: {JSON.stringify(o.masked)}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
