/**
 * The aggregations a Metrics query may ask for (`<aggregation>_<measure>`), in the API's order. A
 * plain list with no imports, so the web UI's menus take it from here too.
 */
export const AGGREGATIONS = [
  'sum',
  'avg',
  'count',
  'max',
  'min',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'histogram',
] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/** The order the web UI's menus offer them in: the count, their default, first. */
export const AGGREGATION_MENU: readonly Aggregation[] = [
  'count',
  ...AGGREGATIONS.filter((a) => a !== 'count'),
];
