/** The chart types a widget may draw. A plain list with no imports, so the web UI's menu takes it from here too. */
export const CHART_TYPES = [
  'LINE_TIME_SERIES',
  'AREA_TIME_SERIES',
  'BAR_TIME_SERIES',
  'HORIZONTAL_BAR',
  'VERTICAL_BAR',
  'PIE',
  'NUMBER',
  'HISTOGRAM',
  'PIVOT_TABLE',
] as const;
