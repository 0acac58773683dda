/**
 * What a history exercises: each producer in each write mode, each transition, the backfill's
 * variants, the worker's kills and the ingestion log's events. Used to prove the fixed seeds cover every producer and
 * transition. Pure.
 */
import { type LogEvent, type Mode, PRODUCERS, type Step } from './history.ts';

const LOG_FEATURE: Record<LogEvent['kind'], string> = {
  'kill-drainer': 'killed drainer',
  redeliver: 'log redelivery',
  replay: 'replay',
  sweep: 'sweep',
};

export function features(steps: Step[]): Set<string> {
  const out = new Set<string>();
  let mode: Mode = 'release3';
  let logged: 'the web writing the store too' | 'the drain the only writer' | undefined;
  const deleted = new Set<string>();
  let backfilling = false;
  for (const s of steps) {
    switch (s.op) {
      case 'log-on':
        logged = s.waitForStore ? 'the web writing the store too' : 'the drain the only writer';
        out.add(`log, ${logged}`);
        break;
      case 'log':
        out.add(LOG_FEATURE[s.event.kind]);
        // A killed drainer has a backlog to be killed in only where the drain is the only writer.
        if (s.event.kind === 'kill-drainer' && logged === 'the drain the only writer')
          out.add('killed drainer, the drain the only writer');
        break;
      case 'switch':
        out.add(`switch ${mode} -> ${s.to}`);
        mode = s.to;
        break;
      case 'rollback':
        out.add(`rollback from ${mode}`);
        mode = 'release3';
        break;
      case 'backfill':
        backfilling = s.concurrent;
        out.add(s.concurrent ? 'backfill alongside traffic' : 'backfill');
        if (s.kills.some((k) => k !== null)) out.add('backfill step killed');
        break;
      case 'worker':
        if (mode === 'dual' || mode === 'events_only') out.add(`worker ${s.action}`);
        break;
      case 'delete':
        deleted.add(s.traceId);
        out.add(`deletion in ${mode}`);
        if (backfilling) out.add('deletion alongside a backfill');
        break;
      case 'backfill-join':
        backfilling = false;
        break;
      case 'send': {
        const t = s.traffic;
        if ('traceId' in t && deleted.has(t.traceId))
          out.add(
            `late ${t.kind === 'trace' && t.producer !== 'batch' ? 'OTLP' : 'batch'} event of a deleted trace in ${mode}`,
          );
        out.add(t.kind === 'trace' ? `${t.producer} in ${mode}` : `${t.kind} in ${mode}`);
        if (logged && mode !== 'release3') out.add(`logged traffic in ${mode}`);
        break;
      }
      default:
        break;
    }
  }
  return out;
}

/** Everything the fixed seeds must exercise together. */
export const REQUIRED_FEATURES: readonly string[] = [
  ...PRODUCERS.flatMap((p) => [`${p} in legacy`, `${p} in dual`, `${p} in events_only`]),
  'batch in release3',
  'trace-update in dual',
  'obs-update in dual',
  'score in dual',
  'experiment in legacy',
  'experiment in dual',
  'switch release3 -> legacy',
  'switch legacy -> dual',
  'switch dual -> events_only',
  'rollback from legacy',
  'rollback from dual',
  'backfill',
  'backfill alongside traffic',
  'backfill step killed',
  'worker kill',
  'worker start',
  'log, the web writing the store too',
  'log, the drain the only writer',
  'logged traffic in legacy',
  'logged traffic in dual',
  'logged traffic in events_only',
  'killed drainer, the drain the only writer',
  'log redelivery',
  'replay',
  'sweep',
  'deletion in dual',
  'deletion in events_only',
  'late batch event of a deleted trace in dual',
  'deletion alongside a backfill',
  'late OTLP event of a deleted trace in dual',
  'late OTLP event of a deleted trace in events_only',
];
