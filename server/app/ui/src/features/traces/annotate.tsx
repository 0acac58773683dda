/**
 * The forms under an observation: add it to a queue, score it (with a score config or freely),
 * comment on it. Queues, score configs and scores are annotation-queues' client; the forms live
 * with the trace view they sit in.
 */
import { useEffect, useState } from 'react';
import { useWrite } from '../../shared/hooks.ts';
import { AddToQueue } from '../annotation-queues/add-to-queue.tsx';
import { queuesApi, type ScoreConfig } from '../annotation-queues/api.ts';
import { ConfigValueInput } from '../annotation-queues/config-value-input.tsx';
import { type TraceObservationDetail, tracesApi } from './api.ts';

export function Annotate({
  o,
  projectId,
  onChange,
}: {
  o: TraceObservationDetail;
  projectId: string;
  onChange: () => Promise<void>;
}) {
  // A root observation stands for its trace: its score is a trace score, as the reference shows.
  const subject = o.isRootObservation ? { traceId: o.traceId } : { traceId: o.traceId, observationId: o.id };
  const [configs, setConfigs] = useState<ScoreConfig[] | undefined>();
  useEffect(() => {
    queuesApi.scoreConfigs(projectId).then(
      (r) => setConfigs(r.data),
      () => setConfigs([]),
    );
  }, [projectId]);
  return (
    <div className="annotate">
      <p>
        <AddToQueue
          projectId={projectId}
          objects={[
            o.isRootObservation
              ? { objectType: 'TRACE', objectId: o.traceId }
              : { objectType: 'OBSERVATION', objectId: o.id },
          ]}
        />
      </p>
      {o.sessionId && (
        <p>
          <AddToQueue projectId={projectId} objects={[{ objectType: 'SESSION', objectId: o.sessionId }]} />
        </p>
      )}
      {configs && configs.length > 0 && (
        <ConfigScoreForm
          configs={configs}
          write={(config, value) =>
            queuesApi.addScore(projectId, { ...subject, configId: config.id, name: config.name, value })
          }
          onDone={onChange}
        />
      )}
      <InlineForm
        fields={[
          { label: 'Score name', placeholder: 'score name', keep: true },
          { label: 'Score value', placeholder: 'value' },
        ]}
        submit="Add score"
        write={([name, value]) => {
          const numeric = value!.trim() !== '' && Number.isFinite(Number(value));
          return queuesApi.addScore(projectId, {
            ...subject,
            name,
            ...(numeric ? { value: Number(value) } : { value, dataType: 'CATEGORICAL' }),
          });
        }}
        onDone={onChange}
      />
      <InlineForm
        fields={[{ label: 'Comment', placeholder: 'comment' }]}
        submit="Add comment"
        write={([content]) =>
          tracesApi.addComment(projectId, {
            objectType: o.isRootObservation ? 'TRACE' : 'OBSERVATION',
            objectId: o.isRootObservation ? o.traceId : o.id,
            content: content!,
          })
        }
        onDone={onChange}
      />
    </div>
  );
}

/**
 * Annotation with a score config, as the reference annotates: the config fixes the name and data
 * type, a numeric value is kept within its bounds, a categorical or boolean one is picked by label.
 */
function ConfigScoreForm({
  configs,
  write,
  onDone,
}: {
  configs: ScoreConfig[];
  write: (config: ScoreConfig, value: number | string) => Promise<unknown>;
  onDone: () => Promise<void>;
}) {
  const [configId, setConfigId] = useState(configs[0]!.id);
  const [value, setValue] = useState('');
  const config = configs.find((c) => c.id === configId) ?? configs[0]!;
  const { error, onSubmit } = useWrite(async () => {
    await write(config, config.dataType === 'NUMERIC' ? Number(value) : value);
    setValue('');
    await onDone();
  });
  return (
    <form onSubmit={onSubmit}>
      <select
        aria-label="Score config"
        value={config.id}
        onChange={(e) => {
          setConfigId(e.target.value);
          setValue('');
        }}
      >
        {configs.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
          </option>
        ))}
      </select>
      <ConfigValueInput config={config} value={value} onChange={setValue} label="Config value" required />
      <button type="submit">Annotate</button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}

/** A one-line form of required text fields; after a successful write it clears those not kept. */
function InlineForm({
  fields,
  submit,
  write,
  onDone,
}: {
  fields: { label: string; placeholder: string; keep?: boolean }[];
  submit: string;
  write: (values: string[]) => Promise<unknown>;
  onDone: () => Promise<void>;
}) {
  const [values, setValues] = useState(() => fields.map(() => ''));
  const { error, onSubmit } = useWrite(async () => {
    await write(values);
    setValues(values.map((v, i) => (fields[i]!.keep ? v : '')));
    await onDone();
  });
  return (
    <form onSubmit={onSubmit}>
      {fields.map((f, i) => (
        <input
          key={f.label}
          aria-label={f.label}
          placeholder={f.placeholder}
          value={values[i]}
          onChange={(e) => setValues(values.map((v, j) => (j === i ? e.target.value : v)))}
          required
        />
      ))}
      <button type="submit">{submit}</button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}
