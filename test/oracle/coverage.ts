/**
 * What a history exercises: each producer in each write mode, each transition, the backfill's
 * variants and the worker's kills. Used to prove the fixed seeds cover every producer and
 * transition. Pure.
 */
import { type Mode, PRODUCERS, type Step } from './history.ts';

export function features(steps: Step[]): Set<string> {
  const out = new Set<string>();
  let mode: Mode = 'release3';
  for (const s of steps) {
    switch (s.op) {
      case 'switch':
        out.add(`switch ${mode} -> ${s.to}`);
        mode = s.to;
        break;
      case 'rollback':
        out.add(`rollback from ${mode}`);
        mode = 'release3';
        break;
      case 'backfill':
        out.add(s.concurrent ? 'backfill alongside traffic' : 'backfill');
        if (s.kills.some((k) => k !== null)) out.add('backfill step killed');
        break;
      case 'worker':
        if (mode === 'dual' || mode === 'events_only') out.add(`worker ${s.action}`);
        break;
      case 'send': {
        const t = s.traffic;
        out.add(t.kind === 'trace' ? `${t.producer} in ${mode}` : `${t.kind} in ${mode}`);
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
];
