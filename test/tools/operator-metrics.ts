/**
 * The two figures of an operator process's /metrics that say whether it acted: the leader gauge
 * and the number of reconcile passes (the count of the duration histogram, summed over results).
 * Read as Prometheus would from the text format; undefined when the endpoint does not answer.
 */
export interface OperatorActivity {
  leader: number;
  reconciles: number;
}

export async function scrapeOperator(url: string): Promise<OperatorActivity | undefined> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
  if (!res?.ok) return undefined;
  const lines = (await res.text()).split('\n');
  const sum = (prefix: string) =>
    lines.filter((l) => l.startsWith(prefix)).reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
  return {
    leader: sum('observatory_operator_leader '),
    reconciles: sum('observatory_operator_reconcile_duration_seconds_count'),
  };
}
