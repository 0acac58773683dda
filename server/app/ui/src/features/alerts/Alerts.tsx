/**
 * A project's alerts: the rules with their state (said in words, not colour alone), last value and
 * history, pause and resume; the channels with a "send test" button; forms for a new rule and a
 * new channel (a webhook's signing secret is shown once, when it is made). The alerts API's own
 * routes under the project's UI scope; the worker evaluates the rules.
 */
import { useState } from 'react';
import { AGGREGATION_MENU } from '../../../../../features/reads/aggregations.ts';
import { Choice, Input, useForm } from '../../shared/fields.tsx';
import { formatSeconds, formatTime } from '../../shared/format.ts';
import { useLoaded, useToggled, useWrite } from '../../shared/hooks.ts';
import { DetailRow, Grid, ShowHide } from '../../shared/lists.tsx';
import { type AlertChannel, type AlertRule, alertsApi } from './api.ts';

const VIEWS = ['observations', 'scores-numeric'] as const;
/** A histogram is not one number to compare. */
const AGGREGATIONS = AGGREGATION_MENU.filter((a) => a !== 'histogram');
const OPERATORS = ['>', '>=', '<', '<='] as const;
const NO_DATA_MODES = ['ok', 'no_data', 'alerting'] as const;
const STATE_WORDS: Record<string, string> = {
  ok: 'OK',
  warning: 'Warning',
  alerting: 'Alerting',
  no_data: 'No data',
};

export function Alerts({ projectId }: { projectId: string }) {
  const { data, error, reload } = useLoaded(
    () => Promise.all([alertsApi.alertRules(projectId), alertsApi.alertChannels(projectId)]),
    [projectId],
  );

  if (error) return <main className="error">{error}</main>;
  if (!data) return <main className="muted">Loading…</main>;
  const [{ data: rules }, { data: channels }] = data;
  return (
    <main>
      <h1>Alerts</h1>
      <h2>Rules</h2>
      <Grid
        empty={rules.length === 0 && 'No alert rule yet.'}
        label="Alert rules"
        columns={['Rule', 'Metric', 'Condition', 'State', 'Last value', 'Last evaluated', '']}
      >
        {rules.map((r) => (
          <RuleRow key={r.id} projectId={projectId} rule={r} onChange={reload} />
        ))}
      </Grid>
      <NewRule projectId={projectId} channels={channels} onCreated={reload} />
      <h2>Channels</h2>
      <Grid
        empty={channels.length === 0 && 'No channel yet: rules without one only record their state.'}
        label="Alert channels"
        columns={['Channel', 'Type', 'URL', '']}
      >
        {channels.map((c) => (
          <ChannelRow key={c.id} projectId={projectId} channel={c} />
        ))}
      </Grid>
      <NewChannel projectId={projectId} onCreated={reload} />
    </main>
  );
}

function RuleRow({
  projectId,
  rule: r,
  onChange,
}: {
  projectId: string;
  rule: AlertRule;
  onChange: () => void;
}) {
  const {
    shown: history,
    error,
    setError,
    toggle: toggleHistory,
  } = useToggled(() => alertsApi.alertHistory(projectId, r.id).then((h) => h.data));
  const state = r.paused ? 'Paused' : r.state ? (STATE_WORDS[r.state] ?? r.state) : 'Not evaluated yet';
  const togglePause = () =>
    alertsApi
      .updateAlertRule(projectId, r.id, { paused: !r.paused })
      .then(onChange, (e: Error) => setError(e.message));
  return (
    <>
      <tr>
        <td>{r.name}</td>
        <td>
          {r.metric.aggregation}({r.metric.measure}) of {r.metric.view} over {formatSeconds(r.window)}, every{' '}
          {formatSeconds(r.frequency)}
        </td>
        <td>
          {r.operator} {r.alertThreshold}
          {r.warningThreshold !== null && ` (warning ${r.operator} ${r.warningThreshold})`}
        </td>
        <td className={`alert-state alert-${r.paused ? 'paused' : (r.state ?? 'none')}`}>
          {state}
          {r.stateSince && !r.paused && <span className="muted"> since {formatTime(r.stateSince)}</span>}
        </td>
        <td className="num">{r.lastValue ?? '–'}</td>
        <td>{formatTime(r.lastEvaluatedAt)}</td>
        <td>
          <button type="button" onClick={() => void togglePause()}>
            {r.paused ? 'Resume' : 'Pause'}
          </button>{' '}
          <ShowHide what="History" shown={history !== undefined} onClick={() => void toggleHistory()} />
          {error && <span className="error"> {error}</span>}
        </td>
      </tr>
      {history && (
        <DetailRow columns={7}>
          {history.length === 0 ? (
            <span className="muted">No transition yet.</span>
          ) : (
            <ol aria-label={`History of ${r.name}`}>
              {history.map((h) => (
                <li key={`${h.evaluatedAt}/${h.toState}`}>
                  {formatTime(h.evaluatedAt)}:{' '}
                  {h.fromState ? (STATE_WORDS[h.fromState] ?? h.fromState) : 'none'} →{' '}
                  {STATE_WORDS[h.toState] ?? h.toState}
                  {h.value !== null && ` at ${h.value}`}
                </li>
              ))}
            </ol>
          )}
        </DetailRow>
      )}
    </>
  );
}

function ChannelRow({ projectId, channel: c }: { projectId: string; channel: AlertChannel }) {
  const [result, setResult] = useState<string | undefined>();
  const sendTest = () =>
    alertsApi.testAlertChannel(projectId, c.id).then(
      (r) =>
        setResult(
          r.status === 'delivered'
            ? `test delivered (HTTP ${r.responseCode})`
            : `test not delivered: ${r.error ?? `HTTP ${r.responseCode}`}`,
        ),
      (e: Error) => setResult(`test not sent: ${e.message}`),
    );
  return (
    <tr>
      <td>{c.name}</td>
      <td>{c.type}</td>
      <td>
        <code>{c.url ?? ''}</code>
      </td>
      <td>
        <button type="button" onClick={() => void sendTest()}>
          Send test
        </button>
        {result && (
          <span role="status" className="test-result">
            {result}
          </span>
        )}
      </td>
    </tr>
  );
}

function NewRule({
  projectId,
  channels,
  onCreated,
}: {
  projectId: string;
  channels: AlertChannel[];
  onCreated: () => void;
}) {
  const { form, setForm, bind } = useForm({
    name: '',
    view: 'observations',
    measure: 'latency',
    aggregation: 'p95',
    operator: '>',
    alertThreshold: '',
    warningThreshold: '',
    window: '5m',
    frequency: '1m',
    noDataMode: 'ok',
  });
  const [picked, setPicked] = useState<string[]>([]);
  const { error, onSubmit } = useWrite(async () => {
    await alertsApi.createAlertRule(projectId, {
      name: form.name,
      metric: { view: form.view, measure: form.measure, aggregation: form.aggregation },
      operator: form.operator,
      alertThreshold: Number(form.alertThreshold),
      ...(form.warningThreshold === '' ? {} : { warningThreshold: Number(form.warningThreshold) }),
      window: form.window,
      frequency: form.frequency,
      noDataMode: form.noDataMode,
      channelIds: picked,
    });
    setForm((f) => ({ ...f, name: '' }));
    onCreated();
  });
  return (
    <form className="card" aria-label="New alert rule" onSubmit={onSubmit}>
      <h3>New rule</h3>
      <Input label="Name" {...bind('name')} />
      <Choice label="View" {...bind('view')} options={VIEWS} />
      <Input label="Measure" {...bind('measure')} />
      <Choice label="Aggregation" {...bind('aggregation')} options={AGGREGATIONS} />
      <Choice label="Operator" {...bind('operator')} options={OPERATORS} />
      <Input label="Alert threshold" {...bind('alertThreshold')} />
      <Input label="Warning threshold" {...bind('warningThreshold')} />
      <Input label="Window" {...bind('window')} />
      <Input label="Frequency" {...bind('frequency')} />
      <Choice label="Without data" {...bind('noDataMode')} options={NO_DATA_MODES} />
      <fieldset>
        <legend>Notify</legend>
        {channels.map((c) => (
          <label key={c.id}>
            <input
              type="checkbox"
              checked={picked.includes(c.id)}
              onChange={(e) =>
                setPicked((p) => (e.target.checked ? [...p, c.id] : p.filter((id) => id !== c.id)))
              }
            />{' '}
            {c.name}
          </label>
        ))}
      </fieldset>
      <button type="submit">Create rule</button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}

function NewChannel({ projectId, onCreated }: { projectId: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<'webhook' | 'slack'>('webhook');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string | undefined>();
  const { error, onSubmit } = useWrite(async () => {
    setSecret(undefined);
    const created = await alertsApi.createAlertChannel(projectId, { name, type, url });
    setSecret(created.signingSecret);
    setName('');
    setUrl('');
    onCreated();
  });
  return (
    <form className="card" aria-label="New alert channel" onSubmit={onSubmit}>
      <h3>New channel</h3>
      <Input label="Channel name" value={name} onChange={(e) => setName(e.target.value)} />
      <Choice
        label="Type"
        value={type}
        onChange={(e) => setType(e.target.value as 'webhook' | 'slack')}
        options={['webhook', 'slack']}
      />
      <Input label="URL" value={url} onChange={(e) => setUrl(e.target.value)} />
      <button type="submit">Create channel</button>
      {secret && (
        <p role="status">
          Signing secret, shown this once: <code className="signing-secret">{secret}</code>
        </p>
      )}
      {error && <p className="error">{error}</p>}
    </form>
  );
}
