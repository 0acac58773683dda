/**
 * The item under review: its object with input, output and scores, and the form that scores it and
 * completes it. It reads the object through the traces client and shows it with the trace view's
 * InputOutput, so a reviewer sees what the trace page shows.
 */
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { formatScore, formatTime } from '../../shared/format.ts';
import { useWrite } from '../../shared/hooks.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { type ObservationRow, type TraceDetail, tracesApi } from '../traces/api.ts';
import { InputOutput } from '../traces/observation-detail.tsx';
import type { QueueReview, ScoreConfig } from './api.ts';
import { ConfigValueInput } from './config-value-input.tsx';

type ScoreTarget = { traceId: string; observationId?: string } | { sessionId: string };

/**
 * The item's object, loaded on the user's read path, and where a score on it is attached (passed
 * to `children`): a trace's scores on the trace, an observation's on it, a session's on the session.
 */
export function ReviewObject({
  projectId,
  item,
  readPath,
  children,
}: {
  projectId: string;
  item: QueueReview['items'][number];
  readPath: 'v3' | 'v4';
  children: (target: ScoreTarget) => ReactNode;
}) {
  const [loaded, setLoaded] = useState<
    { trace?: TraceDetail; observationId?: string; session?: ObservationRow[] } | undefined
  >();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setLoaded(undefined);
    setError(undefined);
    const load = async () => {
      if (item.objectType === 'TRACE')
        return { trace: await tracesApi.trace(projectId, item.objectId, readPath) };
      const column = item.objectType === 'OBSERVATION' ? 'id' : 'sessionId';
      const rows = await tracesApi.observations(projectId, {
        filter: JSON.stringify([{ type: 'string', column, operator: '=', value: item.objectId }]),
        limit: '100',
      });
      if (item.objectType === 'SESSION') return { session: rows.data };
      const row = rows.data[0];
      if (!row) throw new Error(`observation ${item.objectId} not found`);
      return { trace: await tracesApi.trace(projectId, row.traceId, readPath), observationId: row.id };
    };
    load().then(setLoaded, (e: Error) => setError(e.message));
  }, [projectId, item.objectType, item.objectId, readPath]);
  if (error) return <p className="error">{error}</p>;
  if (!loaded) return <p className="muted">Loading {item.objectType.toLowerCase()}…</p>;
  if (loaded.session) {
    return (
      <>
        <ul className="session-observations">
          {loaded.session.map((o) => (
            <li key={o.id}>
              <span className="type">{o.type}</span> {o.name}{' '}
              <span className="muted">{formatTime(o.startTime)}</span>{' '}
              <Link href={traceHref(projectId, o.traceId)}>trace</Link>
            </li>
          ))}
        </ul>
        {children({ sessionId: item.objectId })}
      </>
    );
  }
  const trace = loaded.trace!;
  const shown =
    trace.observations.find((o) => o.id === loaded.observationId) ??
    trace.observations.find((o) => o.isRootObservation) ??
    trace.observations[0];
  return (
    <>
      {shown && (
        <div className="review-object">
          <p>
            <span className="type">{shown.type}</span> {shown.name}{' '}
            <span className="muted">{formatTime(shown.startTime)}</span>{' '}
            <Link href={traceHref(projectId, trace.traceId)}>open trace</Link>
          </p>
          <InputOutput o={shown} />
          <h3>Scores</h3>
          {shown.scores.length === 0 && <p className="muted">none</p>}
          {shown.scores.map((s) => (
            <span key={s.id} className="score">
              {s.name}: {formatScore(s.value)}
            </span>
          ))}
        </div>
      )}
      {children(
        loaded.observationId
          ? { traceId: trace.traceId, observationId: loaded.observationId }
          : { traceId: trace.traceId },
      )}
    </>
  );
}

/** One value per queue config (those left empty are not scored), then the item is completed. */
export function ScoreAndComplete({
  configs,
  completed,
  write,
}: {
  configs: ScoreConfig[];
  completed: boolean;
  write: (values: [ScoreConfig, number | string][]) => Promise<void>;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const { error, onSubmit } = useWrite(async () => {
    await write(
      configs
        .filter((c) => (values[c.id] ?? '') !== '')
        .map((c): [ScoreConfig, number | string] => [
          c,
          c.dataType === 'NUMERIC' ? Number(values[c.id]) : values[c.id]!,
        ]),
    );
    setValues({});
  });
  return (
    <form
      className="score-and-complete"
      aria-label="Score and complete"
      onSubmit={(e: FormEvent) => void onSubmit(e)}
    >
      {configs.map((c) => (
        <span key={c.id} className="config-field">
          {c.name}{' '}
          <ConfigValueInput
            config={c}
            value={values[c.id] ?? ''}
            onChange={(v) => setValues({ ...values, [c.id]: v })}
            label={`Score ${c.name}`}
          />
        </span>
      ))}
      <button type="submit">{completed ? 'Score again' : 'Complete'}</button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}
