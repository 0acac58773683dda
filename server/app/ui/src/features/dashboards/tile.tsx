/** A dashboard's tile, drawn from its data route over the dashboard's range, and its layout controls. */
import { useEffect, useMemo, useState } from 'react';
import {
  dashboardsApi,
  type Placement,
  type PlacementChange,
  type TileData,
  type WidgetDefinition,
} from './api.ts';
import { Chart } from './charts.tsx';
import type { XRange } from './time-series-chart.tsx';

export type Range = { fromTimestamp: string; toTimestamp: string };

export const secondsOf = (r: Range): XRange => [
  Date.parse(r.fromTimestamp) / 1000,
  Date.parse(r.toTimestamp) / 1000,
];

export function Tile({
  projectId,
  dashboardId,
  placement,
  widget,
  range,
  controls,
}: {
  projectId: string;
  dashboardId: string;
  placement: Placement;
  widget: WidgetDefinition;
  range: Range;
  controls?: React.ReactNode;
}) {
  const [data, setData] = useState<TileData | undefined>();
  const [error, setError] = useState<string | undefined>();
  const xRange = useMemo(() => secondsOf(range), [range]);
  useEffect(() => {
    let live = true;
    setData(undefined);
    dashboardsApi.tileData(projectId, dashboardId, placement.id, range).then(
      (d) => live && setData(d),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [projectId, dashboardId, placement.id, range]);
  return (
    <section
      className="card tile"
      data-tile={placement.id}
      data-loaded={data ? 'true' : 'false'}
      style={{
        gridColumn: `${placement.x + 1} / span ${placement.width}`,
        gridRow: `${placement.y + 1} / span ${placement.height}`,
      }}
    >
      <header className="tile-head">
        <h2 title={widget.description}>{widget.name}</h2>
        {controls}
      </header>
      {error && <p className="error">{error}</p>}
      {!data && !error && <p className="muted">Loading…</p>}
      {data && <Chart w={widget} rows={data.data} xRange={xRange} />}
    </section>
  );
}

/** Moves and resizes within the 12-column grid, sending only the field that changes. */
export function layoutControls(p: Placement, apply: (change: PlacementChange) => void, remove: () => void) {
  const b = (label: string, title: string, change: PlacementChange, disabled = false) => (
    <button type="button" title={title} aria-label={title} disabled={disabled} onClick={() => apply(change)}>
      {label}
    </button>
  );
  return (
    <span className="tile-controls">
      {b('↑', 'move up', { y: Math.max(p.y - 1, 0) }, p.y === 0)}
      {b('↓', 'move down', { y: p.y + 1 })}
      {b('←', 'move left', { x: p.x - 1 }, p.x === 0)}
      {b('→', 'move right', { x: p.x + 1 }, p.x + p.width >= 12)}
      {b('−w', 'narrower', { width: p.width - 1 }, p.width <= 2)}
      {b('+w', 'wider', { width: p.width + 1 }, p.x + p.width >= 12)}
      {b('−h', 'shorter', { height: p.height - 1 }, p.height <= 2)}
      {b('+h', 'taller', { height: p.height + 1 })}
      <button type="button" title="remove" aria-label="remove" onClick={remove}>
        ✕
      </button>
    </span>
  );
}
