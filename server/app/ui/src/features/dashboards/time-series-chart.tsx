/**
 * A time series drawn with uPlot (canvas, about 50 kB, fast on thousands of points). Nothing is
 * told by colour alone: series differ in dash pattern and carry legend labels, and every chart lists
 * its series' totals beneath. Bar time series of several series stack.
 */
import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { WidgetDefinition } from '../../../../../features/dashboards/model.ts';
import { formatValue, type TimeSeries, timeSeriesOf } from './chart-data.ts';

type Row = Record<string, unknown>;

export const COLORS = [
  '#2563eb',
  '#d97706',
  '#059669',
  '#dc2626',
  '#7c3aed',
  '#0891b2',
  '#4b5563',
  '#db2777',
];
/** Line patterns, so series differ without colour. */
const DASHES: number[][] = [[], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4], [1, 6], [12, 6], [6, 2, 2, 2]];

/** The page's range in seconds: the x axis spans it whatever buckets hold data. */
export type XRange = [number, number];

/** Running sums per bucket, series by series: the tops of a stacked bar chart. */
function stack(series: TimeSeries['series']): (number | null)[][] {
  const acc: number[] = series[0]?.values.map(() => 0) ?? [];
  return series.map((s) => s.values.map((v, i) => (acc[i]! += v ?? 0)));
}

export function TimeSeriesChart({
  rows,
  w,
  xRange,
}: {
  rows: Row[];
  w: WidgetDefinition;
  xRange: XRange | undefined;
}) {
  const { chartType } = w;
  const ts = useMemo(() => timeSeriesOf(rows, w), [rows, w]);
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const target = el.current;
    if (!target || ts.x.length === 0) return;
    const bars = chartType === 'BAR_TIME_SERIES' ? uPlot.paths.bars?.({ size: [0.8, 40] }) : undefined;
    // Bars of several series stack; the full stack is drawn first so each series' part shows.
    const stacked = bars !== undefined && ts.series.length > 1;
    const heights = stacked ? stack(ts.series) : ts.series.map((s) => s.values);
    const order = ts.series.map((_, i) => i);
    if (stacked) order.reverse();
    const plot = new uPlot(
      {
        width: Math.max(target.clientWidth, 200),
        height: 200,
        scales: { x: { time: true, ...(xRange ? { range: xRange } : {}) } },
        series: [
          {},
          ...order.map((i) => {
            const s = ts.series[i]!;
            return {
              label: s.label,
              stroke: COLORS[i % COLORS.length],
              dash: DASHES[i % DASHES.length],
              width: 2,
              // The legend shows each series' own value, not the stack's top.
              value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) =>
                idx === null ? '–' : formatValue(s.key, s.values[idx]),
              ...(chartType === 'AREA_TIME_SERIES' ? { fill: `${COLORS[i % COLORS.length]}33` } : {}),
              ...(bars ? { paths: bars, fill: `${COLORS[i % COLORS.length]}cc` } : {}),
            };
          }),
        ],
      },
      [ts.x, ...order.map((i) => heights[i]!)] as uPlot.AlignedData,
      target,
    );
    return () => plot.destroy();
  }, [ts, chartType, xRange]);
  if (ts.x.length === 0) return <p className="muted">No data in this range.</p>;
  return (
    <>
      <div ref={el} className="uplot-host" />
      <table className="grid compact">
        <tbody>
          {ts.series.map((s, i) => (
            <tr key={s.label}>
              <td>
                <svg width="28" height="8" aria-hidden="true">
                  <line
                    x1="0"
                    y1="4"
                    x2="28"
                    y2="4"
                    stroke={COLORS[i % COLORS.length]}
                    strokeWidth="2"
                    strokeDasharray={DASHES[i % DASHES.length]!.join(' ')}
                  />
                </svg>{' '}
                {s.label}
              </td>
              <td className="num" title="total over the range">
                Σ{' '}
                {formatValue(
                  s.key,
                  s.values.reduce<number>((a, v) => a + (v ?? 0), 0),
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
