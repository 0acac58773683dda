/**
 * A trace: its observations as a tree with a waterfall of their timings, the selected one's
 * input and output (chat messages or JSON), usage, cost, metadata, scores and comments, and forms
 * that add a score or a comment (members and owners); owners delete the trace, after confirming.
 */
import { useCallback, useEffect, useState } from 'react';
import { formatCost, formatLatency, formatScore, formatTime, formatTokens } from '../../shared/format.ts';
import { useWrite } from '../../shared/hooks.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { navigate } from '../../shared/router.ts';
import { AddToQueue } from '../annotation-queues/add-to-queue.tsx';
import { queuesApi, type ScoreConfig } from '../annotation-queues/api.ts';
import { type ProjectInfo, projectsApi } from '../projects/api.ts';
import {
  type Comment,
  type TraceDeletion,
  type TraceDetail,
  type TraceObservationDetail,
  tracesApi,
} from './api.ts';
import { renderValue, spanLinks, traceBounds, treeOrder, waterfallBar } from './trace-model.ts';

export function Trace({
  projectId,
  traceId,
  readPath,
}: {
  projectId: string;
  traceId: string;
  readPath: 'v3' | 'v4';
}) {
  const [trace, setTrace] = useState<TraceDetail | undefined>();
  const [info, setInfo] = useState<ProjectInfo | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  const reload = useCallback(async () => {
    try {
      const [t, p] = await Promise.all([
        tracesApi.trace(projectId, traceId, readPath),
        projectsApi.project(projectId),
      ]);
      setTrace(t);
      setInfo(p);
    } catch (e) {
      setError((e as Error).message);
    }
  }, [projectId, traceId, readPath]);
  useEffect(() => {
    void reload();
  }, [reload]);

  if (error) return <main className="error">{error}</main>;
  if (!trace || !info) return <main className="muted">Loading trace…</main>;
  const rows = treeOrder(trace.observations);
  const bounds = traceBounds(trace.observations);
  const current = trace.observations.find((o) => o.id === selected) ?? rows[0]?.node;
  const back = `/project/${encodeURIComponent(projectId)}/observations`;

  return (
    <main>
      <p>
        <a
          href={back}
          onClick={(e) => {
            e.preventDefault();
            navigate(back);
          }}
        >
          ← {info.project.name}
        </a>
      </p>
      <h1>
        Trace <code>{trace.traceId}</code>
      </h1>
      <DeleteTrace
        projectId={projectId}
        traceId={trace.traceId}
        back={back}
        canDelete={info.project.role === 'owner'}
      />
      <p className="trace-totals">
        Trace total: {formatTokens(trace.totals.usageDetails) || '0 tokens'} ·{' '}
        {formatCost(trace.totals.totalCost) || 'no cost'}
      </p>
      {trace.truncated && (
        <p className="notice">This trace is large: its first 1000 observations are shown.</p>
      )}
      <div className="trace">
        <div className="tree">
          {rows.map(({ node, depth }) => {
            const bar = waterfallBar(node, bounds.start, bounds.end);
            return (
              <button
                type="button"
                key={node.id}
                className={`tree-row ${node.id === current?.id ? 'selected' : ''}`}
                onClick={() => setSelected(node.id)}
              >
                <span className="tree-name" style={{ paddingLeft: `${depth * 16}px` }}>
                  <span className="type">{node.type}</span> {node.name}
                </span>
                <span className="waterfall">
                  <span className="bar" style={{ left: `${bar.left}%`, width: `${bar.width}%` }} />
                </span>
                <span className="num">{formatLatency(node.latency)}</span>
              </button>
            );
          })}
        </div>
        {current && (
          <ObservationDetail
            o={current}
            comments={trace.comments.filter(
              (c) =>
                (c.objectType === 'OBSERVATION' && c.objectId === current.id) ||
                (c.objectType === 'TRACE' && current.isRootObservation),
            )}
            canWrite={info.project.role !== 'viewer'}
            projectId={projectId}
            onChange={reload}
          />
        )}
      </div>
    </main>
  );
}

/** How often the trace view asks how a deletion under way is doing. */
const DELETION_POLL_MS = 1000;

/**
 * Queues the trace's deletion (as `DELETE /api/public/traces/{id}`), for owners. The worker deletes
 * it in the background: the view shows the deletion under way (also one queued before the page
 * opened, to anyone) and opens the list once it succeeded.
 */
function DeleteTrace({
  projectId,
  traceId,
  back,
  canDelete,
}: {
  projectId: string;
  traceId: string;
  back: string;
  canDelete: boolean;
}) {
  const [error, setError] = useState<string | undefined>();
  const [deletion, setDeletion] = useState<TraceDeletion | undefined>();
  const [deletionId, setDeletionId] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    tracesApi.pendingTraceDeletions(projectId, traceId).then(
      (r) => {
        const pending = r.data[0];
        if (!live || !pending) return;
        setDeletion(pending);
        setDeletionId(pending.id);
      },
      // Without the list the view still works; a deletion started here is followed anyway.
      () => {},
    );
    return () => {
      live = false;
    };
  }, [projectId, traceId]);

  useEffect(() => {
    if (!deletionId) return;
    const timer = setInterval(() => {
      tracesApi.traceDeletion(projectId, deletionId).then(
        (d) => {
          setDeletion(d);
          if (d.status === 'succeeded') navigate(back);
          if (d.status === 'succeeded' || d.status === 'failed') clearInterval(timer);
        },
        (err: Error) => setError(err.message),
      );
    }, DELETION_POLL_MS);
    return () => clearInterval(timer);
  }, [projectId, deletionId, back]);

  const remove = () => {
    const asked = `Delete trace ${traceId} with its observations, scores, comments and media? This cannot be undone.`;
    if (!window.confirm(asked)) return;
    setError(undefined);
    tracesApi.deleteTrace(projectId, traceId).then(
      (r) => setDeletionId(r.deletionId),
      (err: Error) => setError(err.message),
    );
  };
  const underway = deletionId !== undefined && deletion?.status !== 'failed';
  return (
    <>
      {deletionId && (
        <p className="notice" role="status">
          {deletion?.status === 'failed'
            ? `Deletion failed: ${deletion.error ?? 'unknown error'}`
            : `Deletion in progress (${deletion?.status ?? 'queued'}): ${deletion?.deletedCount ?? 0} of ${deletion?.traceCount ?? 1} traces deleted`}
        </p>
      )}
      {canDelete && (
        <p>
          <button type="button" className="danger" onClick={remove} disabled={underway}>
            Delete trace
          </button>
          {error && <span className="error"> {error}</span>}
        </p>
      )}
    </>
  );
}

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

function ObservationDetail(props: {
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

function Annotate({
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

/** A score config's value: a number within its bounds, or one of its categories by label. */
export function ConfigValueInput({
  config,
  value,
  onChange,
  label,
  required,
}: {
  config: ScoreConfig;
  value: string;
  onChange: (value: string) => void;
  label: string;
  required?: boolean;
}) {
  return config.dataType === 'NUMERIC' ? (
    <input
      aria-label={label}
      type="number"
      step="any"
      min={config.minValue ?? undefined}
      max={config.maxValue ?? undefined}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      required={required}
    />
  ) : (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value)} required={required}>
      <option value="">choose</option>
      {(config.categories ?? []).map((c) => (
        <option key={c.label} value={c.label}>
          {c.label}
        </option>
      ))}
    </select>
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
