/**
 * Every status the operator wrote, judged against the cluster's truth at that moment (issue 31):
 * a restarted operator must not report what it has not seen. Three lies it must never tell:
 * "Deployment X does not exist yet" for a Deployment that has existed for a while; "n of m worker
 * pods are Ready and answered" (n < m) while m worker Pods have been Ready in a settled world; and
 * Ready turning False in a settled world with nothing changed (same generation, annotations, state,
 * intent and announced world).
 */
import type { Truth } from './cluster-truth.ts';
import type { WalkRecord } from './status-recorder.ts';

/** How long a fact must have held to count as "existing" or "settled" (watch lag, Pod start). */
const HELD_MS = 10_000;

export function untruths(records: readonly WalkRecord[]): string[] {
  const out: string[] = [];
  records.forEach((r, at) => {
    const t: Truth | undefined = r.truth;
    if (!t) return;
    const settled = t.settledSince !== undefined && r.seenAt - t.settledSince > HELD_MS;
    for (const c of r.status.conditions ?? []) {
      for (const m of (c.message ?? '').matchAll(/Deployment (\S+) does not exist yet/g)) {
        const since = t.deployments[m[1]!];
        if (since !== undefined && r.seenAt - since > HELD_MS)
          out.push(`#${at} ${c.type}=${c.status}: "${m[0]}" while it had existed for ${r.seenAt - since} ms`);
      }
      const answered = /(\d+) of (\d+) worker pods are Ready and answered/.exec(c.message ?? '');
      if (answered && settled && t.readyWorkers >= Number(answered[2]))
        out.push(
          `#${at} ${c.type}=${c.status}: "${answered[0]}" while ${t.readyWorkers} worker Pods were Ready in a settled world`,
        );
    }
    const before = records[at - 1];
    const ready = (x: WalkRecord) => x.status.conditions?.find((c) => c.type === 'Ready')?.status;
    if (
      before &&
      ready(before) === 'True' &&
      ready(r) === 'False' &&
      settled &&
      before.generation === r.generation &&
      before.world === r.world &&
      JSON.stringify(before.annotations ?? {}) === JSON.stringify(r.annotations ?? {}) &&
      before.status.state === r.status.state &&
      JSON.stringify(before.status.target) === JSON.stringify(r.status.target)
    ) {
      const c = r.status.conditions!.find((x) => x.type === 'Ready')!;
      out.push(
        `#${at} Ready True -> False (${c.reason}: ${c.message}) with nothing changed in a settled world`,
      );
    }
  });
  return out;
}
