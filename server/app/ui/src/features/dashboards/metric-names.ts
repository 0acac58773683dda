/**
 * A widget's metrics named as a reader says them, for legends, tooltips, table headers and values:
 * the metrics API keys them `<aggregation>_<measure>` (`count_count`, `sum_inputTokens`,
 * `avg_value`), which reads as Traces, Input tokens and Average score. Pure.
 */
import type { WidgetDefinition } from '../../../../../features/dashboards/model.ts';

type Metric = WidgetDefinition['metrics'][number];
type Named = Pick<WidgetDefinition, 'view' | 'filters'>;

/** `timeToFirstToken` -> `time to first token`. */
const words = (measure: string) => measure.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const isScores = (w: Named) => w.view.startsWith('scores');

/** What the view's rows are: root observations are traces. */
function rowsOf(w: Named): string {
  if (isScores(w)) return 'scores';
  const rootsOnly = w.filters.some(
    (f) => f.column === 'isRootObservation' && f.operator === '=' && f.value === true,
  );
  return rootsOnly ? 'traces' : 'observations';
}

/** The measure as a noun: a score's `value` is the score. */
const nounOf = (w: Named, measure: string) => (isScores(w) && measure === 'value' ? 'score' : words(measure));

export function metricName(w: Named, m: Metric): string {
  const noun = nounOf(w, m.measure);
  switch (m.agg) {
    case 'count':
      return capitalized(m.measure === 'count' ? rowsOf(w) : `${rowsOf(w)} with ${noun}`);
    case 'sum':
      return capitalized(m.measure === 'count' ? rowsOf(w) : noun);
    case 'avg':
      return `Average ${noun}`;
    case 'min':
      return `Minimum ${noun}`;
    case 'max':
      return `Maximum ${noun}`;
    case 'histogram':
      return `${capitalized(noun)} distribution`;
    default:
      return `${m.agg} ${noun}`;
  }
}

/** The names of a widget's metrics, in the order of its keys (chart-data.ts `metricKeys`). */
export const metricNames = (w: Named & Pick<WidgetDefinition, 'metrics'>): string[] =>
  w.metrics.map((m) => metricName(w, m));
