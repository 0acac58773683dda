/**
 * The selected observation: timings, usage, cost and what priced it, links, input and output,
 * metadata, scores, comments.
 */
import { formatCost, formatLatency, formatScore, formatTime, formatTokens } from '../../shared/format.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { Annotate } from './annotate.tsx';
import type { Comment, TraceObservationDetail } from './api.ts';
import { renderValue, spanLinks } from './trace-model.ts';

function Value({ raw }: { raw: string | null }) {
  const r = renderValue(raw);
  if (r.kind === 'empty') return <p className="muted">none</p>;
  if (r.kind === 'chat') {
    return (
      <div className="chat">
        {r.messages.map((m, i) => (
          // Messages have no id; their order is their identity.
          // biome-ignore lint/suspicious/noArrayIndexKey: a message list never reorders
          <div key={i} className={`message role-${m.role}`}>
            <div className="role">{m.role}</div>
            <pre>{m.content}</pre>
          </div>
        ))}
      </div>
    );
  }
  return <pre className="value">{r.text}</pre>;
}

/** An observation's input and output, each under its heading. */
export function InputOutput({ o }: { o: { input: string | null; output: string | null } }) {
  return (
    <>
      <h3>Input</h3>
      <Value raw={o.input} />
      <h3>Output</h3>
      <Value raw={o.output} />
    </>
  );
}

export function ObservationDetail(props: {
  o: TraceObservationDetail;
  comments: Comment[];
  canWrite: boolean;
  projectId: string;
  onChange: () => Promise<void>;
}) {
  const { o } = props;
  const links = spanLinks(o.metadata);
  return (
    <section className="detail">
      <h2>
        {o.name} <span className="muted">{o.type}</span>
      </h2>
      <dl>
        <dt>Start</dt>
        <dd>{formatTime(o.startTime)}</dd>
        <dt>Latency</dt>
        <dd>{formatLatency(o.latency)}</dd>
        {o.model && (
          <>
            <dt>Model</dt>
            <dd>{o.model}</dd>
          </>
        )}
        <dt>Tokens</dt>
        <dd>{formatTokens(o.usageDetails)}</dd>
        <dt>Cost</dt>
        <dd>
          {formatCost(o.totalCost)}
          {o.costSource && (
            <span className="muted"> · {o.costSource === 'sent' ? 'sent by the SDK' : 'computed'}</span>
          )}
        </dd>
        {o.matchedModel && (
          <>
            <dt>Priced by</dt>
            <dd className="matched-model">
              {o.matchedModel.modelName} ({o.matchedModel.builtIn ? 'built-in' : 'project'}, pattern{' '}
              <code>{o.matchedModel.matchPattern}</code>)
              {o.usagePricingTierName ? ` · tier ${o.usagePricingTierName}` : ''}
            </dd>
          </>
        )}
        {Object.keys(o.costDetails ?? {}).length > 0 && (
          <>
            <dt>Cost by usage type</dt>
            <dd>
              <table className="grid compact" aria-label="Cost by usage type">
                <tbody>
                  {Object.entries(o.costDetails).map(([k, v]) => (
                    <tr key={k}>
                      <th scope="row">{k}</th>
                      <td className="num">{o.usageDetails[k] ?? ''}</td>
                      <td className="num">{formatCost(v)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </dd>
          </>
        )}
        <dt>Level</dt>
        <dd>
          {o.level}
          {o.statusMessage ? ` · ${o.statusMessage}` : ''}
        </dd>
        {links.length > 0 && (
          <>
            <dt>Links</dt>
            <dd>
              <ul className="span-links" aria-label="Span links">
                {links.map((l) => (
                  <li key={`${l.traceId}/${l.spanId}`}>
                    <Link href={traceHref(props.projectId, l.traceId)}>trace {l.traceId}</Link>{' '}
                    <span className="muted">span {l.spanId}</span>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
      <InputOutput o={o} />
      <h3>Metadata</h3>
      {Object.keys(o.metadata ?? {}).length === 0 ? (
        <p className="muted">none</p>
      ) : (
        <pre className="value">{JSON.stringify(o.metadata, null, 2)}</pre>
      )}
      <h3>Scores</h3>
      {o.scores.length === 0 && <p className="muted">none</p>}
      {o.scores.length > 0 && (
        <ul className="scores" aria-label="Scores">
          {o.scores.map((s) => (
            <li key={s.id} className="score">
              {s.name}: {formatScore(s.value)} <span className="muted">{s.source}</span>
              {s.comment && <span className="score-comment"> · {s.comment}</span>}
              {s.executionTraceId && (
                <>
                  {' · '}
                  <Link href={traceHref(props.projectId, s.executionTraceId)}>judge trace</Link>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <h3>Comments</h3>
      {props.comments.length === 0 && <p className="muted">none</p>}
      <ul className="comments">
        {props.comments.map((c) => (
          <li key={c.id}>
            <span className="muted">{formatTime(c.createdAt)}</span> {c.content}
          </li>
        ))}
      </ul>
      {props.canWrite && <Annotate {...props} />}
    </section>
  );
}
