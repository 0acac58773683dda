/**
 * The background migrations page (owners): the write mode; for deployment admins the five
 * historic backfill steps as the worker or `observatory backfill` records them and the
 * propagation's health and lag; the producers `events_only` would refuse or change (a project
 * owner sees those of their projects) and the trace-level evaluators the cutover stops, each with
 * a button that replaces it by an observation rule; refreshed every few seconds. A failed step
 * names the command and the operator annotation that retry it. The conversion is evaluation's
 * call (evaluation/api.ts): the page only offers it where the cutover needs it.
 */
import { useEffect, useState } from 'react';
import { formatLatency, formatTime } from '../../shared/format.ts';
import { Grid } from '../../shared/lists.tsx';
import { evaluationApi } from '../evaluation/api.ts';
import {
  type BackfillStepView,
  backfillApi,
  type LegacyEvaluatorView,
  type MigrationInfo,
  type PropagationView,
} from './api.ts';

const REFRESH_MS = 5000;

export function Migration() {
  const [info, setInfo] = useState<MigrationInfo | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let stopped = false;
    const tick = () =>
      backfillApi.migration().then(
        (m) => {
          if (!stopped) setInfo(m);
        },
        (e: Error) => {
          if (!stopped) setError(e.message);
        },
      );
    void tick();
    const timer = setInterval(tick, REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  if (error) return <main className="error">{error}</main>;
  if (!info) return <main className="muted">Loading…</main>;
  return (
    <main>
      <h1>Background migrations</h1>
      <p>
        Release {info.release} · write mode {info.writeMode} · preview opt-in{' '}
        {info.allowPreviewOptIn ? 'allowed' : 'off'} ·{' '}
        {info.backfillMayRun
          ? 'the historic backfill may run'
          : 'the historic backfill does not run in this mode'}
      </p>
      {info.deploymentAdmin && info.steps ? (
        <>
          <Steps steps={info.steps} />
          <h2>Propagation</h2>
          <Propagation p={info.propagation} />
        </>
      ) : (
        <p className="muted">
          The backfill and the propagation are shown to deployment admins (owners of the default
          organization); the producers below are those of the projects you own.
        </p>
      )}
      <h2>Producers</h2>
      {!info.producers ? (
        <p className="muted">Release 3 records no producers.</p>
      ) : info.producers.data.length === 0 ? (
        <p>No producer events_only would refuse or change in the past {info.producers.window}.</p>
      ) : (
        <Grid
          label="Producers"
          columns={['Key', 'SDK', 'Path', 'In events_only', 'Requests', 'Last seen', 'What to upgrade']}
        >
          {info.producers.data.map((p) => (
            <tr key={`${p.publicKey}/${p.sdkName}/${p.sdkVersion}/${p.path}`}>
              <td>
                <code>{p.publicKey}</code>
              </td>
              <td>
                {p.sdkName} {p.sdkVersion}
              </td>
              <td>{p.path}</td>
              <td className={p.consequence === 'refused' ? 'error' : ''}>{p.consequence}</td>
              <td className="num">{p.requests}</td>
              <td>{formatTime(p.lastSeen)}</td>
              <td>{p.advice}</td>
            </tr>
          ))}
        </Grid>
      )}
      {info.producers && <LegacyEvaluators list={info.producers.legacyEvaluators} />}
    </main>
  );
}

/** Trace-level rules stop at the cutover: each can be replaced by an observation rule here. */
function LegacyEvaluators({ list }: { list: LegacyEvaluatorView[] }) {
  const [done, setDone] = useState<Record<string, string>>({});
  const convert = (e: LegacyEvaluatorView) =>
    evaluationApi.convertRule(e.projectId, e.ruleId).then(
      (rule) => setDone((d) => ({ ...d, [e.ruleId]: `replaced by the observation rule "${rule.name}"` })),
      (err: Error) => setDone((d) => ({ ...d, [e.ruleId]: `not converted: ${err.message}` })),
    );
  return (
    <>
      <h2>Trace-level evaluators</h2>
      {list.length === 0 ? (
        <p>No trace-level evaluator is enabled: the cutover stops none.</p>
      ) : (
        <Grid label="Trace-level evaluators" columns={['Rule', 'Project', 'At the cutover']}>
          {list.map((e) => (
            <tr key={e.ruleId}>
              <td>{e.name}</td>
              <td>
                <code>{e.projectId}</code>
              </td>
              <td>
                {done[e.ruleId] ?? (
                  <>
                    stops ·{' '}
                    <button type="button" onClick={() => void convert(e)}>
                      Convert to an observation rule
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </Grid>
      )}
    </>
  );
}

function Propagation({ p }: { p: PropagationView | null }) {
  if (!p) return <p className="muted">The web has no REDIS_URL, so it cannot read the propagation state.</p>;
  if (!p.enabled) return <p>This write mode stages nothing: there is no propagation to watch.</p>;
  return (
    <dl>
      <dt>Health</dt>
      <dd className={p.stuck ? 'error' : ''}>
        {p.stuck
          ? `stuck: no successful run for over ${formatLatency(p.thresholdSeconds)}`
          : p.idle
            ? 'healthy (idle: nothing waiting)'
            : 'healthy'}
      </dd>
      <dt>Lag</dt>
      <dd>
        {p.propagationDelaySeconds === null
          ? 'none propagated yet'
          : formatLatency(p.propagationDelaySeconds)}
      </dd>
      <dt>Last success</dt>
      <dd>
        {formatTime(p.lastSuccessAt) || 'never'}
        {p.lastProcessedPartition ? ` · partition ${p.lastProcessedPartition}` : ''}
      </dd>
      {p.lastError && (
        <>
          <dt>Last error</dt>
          <dd className="error">{p.lastError}</dd>
        </>
      )}
    </dl>
  );
}

function Steps({ steps }: { steps: BackfillStepView[] }) {
  return (
    <Grid label="Backfill steps" columns={['Step', 'Name', 'State', 'Chunks', 'Finished', 'Failure']}>
      {steps.map((s) => (
        <tr key={s.step}>
          <td>{s.step}</td>
          <td>{s.name}</td>
          <td>
            {s.status}
            {s.lockedBy ? ` (by ${s.lockedBy})` : ''}
          </td>
          <td>
            {s.chunksDone}/{s.chunksTotal}
          </td>
          <td>{formatTime(s.finishedAt)}</td>
          <td>
            {s.failedReason && (
              <>
                {formatTime(s.failedAt)}: {s.failedReason}
                {s.retry && (
                  <>
                    {' '}
                    {s.retry.kubectl ? (
                      <>
                        · retry with <code>{s.retry.kubectl}</code> (the operator runs the step again; a value
                        used before needs a new one, e.g. {s.retry.value}.2)
                      </>
                    ) : (
                      <>
                        · retry with <code>{s.retry.command}</code>
                      </>
                    )}
                  </>
                )}
              </>
            )}
          </td>
        </tr>
      ))}
    </Grid>
  );
}
