/** One row of the observations table (and of the version 3 traces table), with its search match under it. */
import { formatCost, formatLatency, formatScore, formatTime, formatTokens } from '../../shared/format.ts';
import { traceHref } from '../../shared/link.tsx';
import { WordsCell } from '../../shared/lists.tsx';
import { navigate } from '../../shared/router.ts';
import type { ObservationRow } from './api.ts';

export const HEADERS = [
  'Name',
  'Type',
  'Start time',
  'Latency',
  'Model',
  'Tokens',
  'Cost',
  'User',
  'Session',
  'Tags',
  'Level',
  'Scores',
];

/** A root row's total over its whole trace, under the observation's own value. */
function TraceTotal({ text }: { text: string }) {
  return (
    <div className="trace-total" title="Total over the trace's observations">
      trace Σ {text || '–'}
    </div>
  );
}

export function ObservationRowView({
  row: r,
  projectId,
  picked,
  onPick,
}: {
  row: ObservationRow;
  projectId: string;
  /** Where rows can be picked (to add them to an annotation queue): whether this one is. */
  picked?: boolean;
  onPick?: (picked: boolean) => void;
}) {
  const href = traceHref(projectId, r.traceId);
  return (
    <>
      <tr className={`level-${r.level.toLowerCase()}`}>
        <td title={r.id}>
          <a
            href={href}
            onClick={(e) => {
              e.preventDefault();
              navigate(href);
            }}
          >
            {r.name || '(unnamed)'}
          </a>
        </td>
        <td>{r.type}</td>
        <td>{formatTime(r.startTime)}</td>
        <td className="num">{formatLatency(r.latency)}</td>
        <td>{r.model ?? ''}</td>
        <td className="num">
          {formatTokens(r.usageDetails)}
          {r.traceTotals && <TraceTotal text={formatTokens(r.traceTotals.usageDetails)} />}
        </td>
        <td className="num">
          {formatCost(r.totalCost)}
          {r.traceTotals && <TraceTotal text={formatCost(r.traceTotals.totalCost)} />}
        </td>
        <td>{r.userId ?? ''}</td>
        <td>{r.sessionId ?? ''}</td>
        <WordsCell words={r.tags} className="tag" />
        <td>{r.level}</td>
        <td>
          {r.scores.map((s) => (
            <span key={s.id} className="score" title={s.comment ?? undefined}>
              {s.name}: {formatScore(s.value)}
              {s.source === 'EVAL' && <span className="score-source"> (eval)</span>}
            </span>
          ))}
        </td>
        {onPick && (
          // Its own cell, so that the name cell's accessible name stays the name.
          <td>
            <input
              type="checkbox"
              aria-label={`Pick ${r.name || r.id}`}
              checked={picked}
              onChange={(e) => onPick(e.target.checked)}
            />
          </td>
        )}
      </tr>
      {r.match && (
        <tr className="match">
          <td colSpan={HEADERS.length + (onPick ? 1 : 0)}>
            <span className="muted">{r.match.field}: </span>
            {r.match.before}
            <mark>{r.match.match}</mark>
            {r.match.after}
          </td>
        </tr>
      )}
    </>
  );
}
