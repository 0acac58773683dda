/** An evaluation rule's row (state, enable and pause) and its execution log. */
import { useState } from 'react';
import { type FilterCondition, formatFilters } from '../../shared/filter-syntax.ts';
import { formatScore, formatTime } from '../../shared/format.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { DetailRow, Grid, ShowHide } from '../../shared/lists.tsx';
import { type EvaluationRule, type ExecutionLogPage, evaluationApi } from './api.ts';

const stateOf = (r: EvaluationRule) =>
  r.status === 'active' ? 'Active' : r.status === 'paused' ? `Paused: ${r.pausedReason}` : 'Inactive';

export function RuleRow({
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
