/**
 * The analytics reads of the retention pass (pure builders). A trace expires when nothing of it is
 * newer than the cutoff in any table that may hold it, so a long-running trace whose first span is
 * old but whose last is recent stays whole. Scores without a trace (session and dataset-run
 * scores) expire by their own timestamp. Every query is scoped by project and bounded by `limit`.
 */
import { chTime } from '../write-model/time.ts';
import type { Statement } from './trace-deletion-sql.ts';

/** Each table with a trace's times, and the columns naming the trace and its time. */
const TRACE_TIMES = {
  traces: { trace: 'id', time: 'timestamp' },
  observations: { trace: 'trace_id', time: 'start_time' },
  events_core: { trace: 'trace_id', time: 'start_time' },
} as const;

const RELEASE_3_SOURCES = ['traces', 'observations'] as const;

/** Up to `limit` ids of the project's traces with nothing newer than `cutoff`. */
export function expiredTracesQuery(
  release: '3' | '4',
  projectId: string,
  cutoff: Date,
  limit: number,
): Statement {
  const sources =
    release === '3' ? RELEASE_3_SOURCES : (Object.keys(TRACE_TIMES) as (keyof typeof TRACE_TIMES)[]);
  const union = sources
    .map((t) => {
      const c = TRACE_TIMES[t];
      return `SELECT ${c.trace} AS trace_id, toDateTime64(${c.time}, 6) AS t FROM ${t} WHERE project_id = {project_id:String}`;
    })
    .join('\nUNION ALL\n');
  return {
    query: `SELECT trace_id FROM (${union})
GROUP BY trace_id HAVING max(t) < {cutoff:DateTime64(6)}
ORDER BY trace_id LIMIT {limit:UInt32}`,
    params: { project_id: projectId, cutoff: chTime(cutoff), limit },
  };
}

/** Up to `limit` ids of the project's scores without a trace older than `cutoff`. */
export function expiredTracelessScoresQuery(projectId: string, cutoff: Date, limit: number): Statement {
  return {
    query: `SELECT DISTINCT id FROM scores
WHERE project_id = {project_id:String} AND (trace_id IS NULL OR trace_id = '') AND timestamp < {cutoff:DateTime64(6)}
ORDER BY id LIMIT {limit:UInt32}`,
    params: { project_id: projectId, cutoff: chTime(cutoff), limit },
  };
}
