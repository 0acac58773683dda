/**
 * Tables indexed by names from requests (filter columns, views, dimensions, measures, sort fields)
 * are plain objects, which also answer to `constructor`, `__proto__`, `toString` and every other
 * name they inherit. `own` reads only the table's own entries, so such a name is unknown like any
 * other. Pure.
 */
export const own = <T>(table: Readonly<Record<string, T>>, name: string): T | undefined =>
  Object.hasOwn(table, name) ? table[name] : undefined;
