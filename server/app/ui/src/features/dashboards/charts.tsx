/**
 * A widget's chart. Time series are drawn with uPlot (time-series-chart.tsx); categories, pies,
 * numbers, histograms and tables are plain HTML and SVG. Nothing is told by colour alone: bars and
 * slices print their label and value. Metrics are shown by their names (metric-names.ts), looked up
 * and formatted by their keys.
 */
import type { WidgetDefinition } from '../../../../../features/dashboards/model.ts';
import { type Category, categoriesOf, formatValue, histogramOf, metricKeys } from './chart-data.ts';
import { metricNames } from './metric-names.ts';
import { COLORS, TimeSeriesChart, type XRange } from './time-series-chart.tsx';

type Row = Record<string, unknown>;

/** Each metric scaled to its own largest value, so that costs and counts share a chart. */
const shares = (cats: Category[], keys: string[]) => {
  const max = keys.map((_, k) => Math.max(...cats.map((c) => Math.abs(c.values[k] ?? 0)), 0) || 1);
  return (c: Category, k: number) => `${(100 * Math.abs(c.values[k] ?? 0)) / max[k]!}%`;
};

/** Metrics by key (rows, units) and name (what the reader sees). */
interface Shown {
  keys: string[];
  names: string[];
}

function BarValue({ keys, names, k, c }: Shown & { k: number; c: Category }) {
  return (
    <span className="bar-value" data-value={c.values[k] ?? ''}>
      {keys.length > 1 ? `${names[k]}: ` : ''}
      {formatValue(keys[k]!, c.values[k])}
    </span>
  );
}

function Bars({ cats, keys, names, vertical }: Shown & { cats: Category[]; vertical: boolean }) {
  if (cats.length === 0) return <p className="muted">No data in this range.</p>;
  const share = shares(cats, keys);
  if (vertical) {
    return (
      <div className="columns">
        {cats.map((c) => (
          <div className="column-group" key={c.label}>
            <div className="column-bars">
              {keys.map((key, k) => (
                <div className="column" key={key}>
                  <BarValue keys={keys} names={names} k={k} c={c} />
                  <div className="column-track">
                    <div className={`bar-fill pattern-${k % 4}`} style={{ height: share(c, k) }} />
                  </div>
                </div>
              ))}
            </div>
            <div className="bar-label">{c.label}</div>
          </div>
        ))}
      </div>
    );
  }
  return (
    <div className="bars">
      {cats.map((c) => (
        <div className="bar-group" key={c.label}>
          <div className="bar-label">{c.label}</div>
          {keys.map((key, k) => (
            <div className="bar-row" key={key}>
              <div className={`bar-fill pattern-${k % 4}`} style={{ width: share(c, k) }} />
              <BarValue keys={keys} names={names} k={k} c={c} />
            </div>
          ))}
        </div>
      ))}
    </div>
  );
}

function Pie({ cats, keyName }: { cats: Category[]; keyName: string }) {
  const total = cats.reduce((a, c) => a + Math.max(c.values[0] ?? 0, 0), 0);
  if (cats.length === 0 || total === 0) return <p className="muted">No data in this range.</p>;
  let angle = -Math.PI / 2;
  const slices = cats.map((c, i) => {
    const share = Math.max(c.values[0] ?? 0, 0) / total;
    const a0 = angle;
    angle += share * 2 * Math.PI;
    const mid = (a0 + angle) / 2;
    const large = share > 0.5 ? 1 : 0;
    const p = (a: number, r = 80) => `${100 + r * Math.cos(a)} ${100 + r * Math.sin(a)}`;
    const d =
      share >= 1
        ? 'M 20 100 A 80 80 0 1 1 180 100 A 80 80 0 1 1 20 100'
        : `M 100 100 L ${p(a0)} A 80 80 0 ${large} 1 ${p(angle)} Z`;
    return { c, i, share, d, labelAt: p(mid, 55).split(' ') };
  });
  return (
    <div className="pie">
      <svg viewBox="0 0 200 200" width="180" height="180" role="img" aria-label="pie chart">
        {slices.map((s) => (
          <g key={s.c.label}>
            <path d={s.d} fill={COLORS[s.i % COLORS.length]} stroke="#fff" strokeWidth="1" />
            {s.share > 0.04 && (
              <text x={s.labelAt[0]} y={s.labelAt[1]} textAnchor="middle" className="slice-label">
                {s.i + 1}
              </text>
            )}
          </g>
        ))}
      </svg>
      <table className="grid compact">
        <tbody>
          {slices.map((s) => (
            <tr key={s.c.label}>
              <td>{s.i + 1}</td>
              <td>{s.c.label}</td>
              <td className="num">{formatValue(keyName, s.c.values[0])}</td>
              <td className="num">{(s.share * 100).toFixed(1)}%</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Table({ rows, w }: { rows: Row[]; w: WidgetDefinition }) {
  const keys = metricKeys(w);
  const names = metricNames(w);
  if (rows.length === 0) return <p className="muted">No data in this range.</p>;
  return (
    <table className="grid compact">
      <thead>
        <tr>
          {w.dimensions.map((d) => (
            <th key={d.field}>{d.field}</th>
          ))}
          {keys.map((k, i) => (
            <th key={k} className="num">
              {names[i]}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id; the order is the query's
          <tr key={i}>
            {w.dimensions.map((d) => (
              <td key={d.field}>{String(r[d.field] ?? '') || '(none)'}</td>
            ))}
            {keys.map((k) => (
              <td key={k} className="num" data-value={String(r[k] ?? '')}>
                {formatValue(k, r[k] as number)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Chart({ w, rows, xRange }: { w: WidgetDefinition; rows: Row[]; xRange?: XRange }) {
  const keys = metricKeys(w);
  const names = metricNames(w);
  switch (w.chartType) {
    case 'LINE_TIME_SERIES':
    case 'AREA_TIME_SERIES':
    case 'BAR_TIME_SERIES':
      return <TimeSeriesChart rows={rows} w={w} xRange={xRange} />;
    case 'HORIZONTAL_BAR':
    case 'VERTICAL_BAR':
      return (
        <Bars
          cats={categoriesOf(rows, w)}
          keys={keys}
          names={names}
          vertical={w.chartType === 'VERTICAL_BAR'}
        />
      );
    case 'PIE':
      return <Pie cats={categoriesOf(rows, w)} keyName={keys[0] ?? ''} />;
    case 'HISTOGRAM':
      return (
        <Bars cats={histogramOf(rows, keys[0] ?? '')} keys={['count']} names={['Count']} vertical={true} />
      );
    case 'NUMBER':
      return (
        <div className="numbers">
          {keys.map((k, i) => (
            <div key={k} className="big-number" data-metric={k} data-value={String(rows[0]?.[k] ?? '')}>
              {formatValue(k, (rows[0]?.[k] as number | undefined) ?? null)}
              {keys.length > 1 && <span className="muted"> {names[i]}</span>}
            </div>
          ))}
        </div>
      );
    case 'PIVOT_TABLE':
      return <Table rows={rows} w={w} />;
  }
}
