/**
 * Interleaved A/B ingestion through one running web, for figures whose two sides differ by one
 * switch (cost computed or not, rules active or not): the variants take turns in rounds, the order
 * reversed every other round, so a shared machine's drift falls on each alike, and each round's
 * ratio compares neighbouring phases. Every phase waits for the store's merges, then sends its
 * requests (fresh ids each phase) in a closed loop; the processes' CPU is read around it.
 */
import type { AnalyticsServer } from '../fixtures/service.ts';
import { type Protocol, pool, send } from './ingestion.ts';
import { cpuSecondsTree, settle } from './proc.ts';
import { line, quantile, ratio } from './report.ts';

export interface Variant {
  name: string;
  body: (request: number, traces: number) => Buffer;
  /** Outside the timed window, before and after each of the variant's phases. */
  before?: () => Promise<void>;
  after?: () => Promise<void>;
}

export interface Phase {
  /** Index of the first request: the bodies' ids (and their text) come from it. */
  firstRequest: number;
  spans: number;
  seconds: number;
  /** CPU seconds each watched process used during the phase, by name. */
  cpu: Record<string, number>;
  retries: number;
}

export interface Interleaving {
  ch: AnalyticsServer;
  url: string;
  protocol: Protocol;
  headers: Record<string, string>;
  variants: Variant[];
  rounds: number;
  requests: number;
  concurrency: number;
  traces: number;
  spansPerTrace: number;
  /** Processes whose CPU (with their children's) is read around each phase (the web, the store, a worker, PostgreSQL). */
  pids: Record<string, number>;
}

/** Each variant's phases, in round order. */
export async function interleave(o: Interleaving): Promise<Map<string, Phase[]>> {
  const out = new Map<string, Phase[]>(o.variants.map((v) => [v.name, []]));
  let nextRequest = 0;
  // One untimed turn of each variant first: the project's first requests load its model catalog,
  // and the web's code paths warm up, which would otherwise fall on the first variant.
  for (const v of o.variants) {
    await v.before?.();
    await pool(o.concurrency, o.concurrency, async (i) => {
      const body = new Uint8Array(v.body(nextRequest + i, o.traces));
      await send(o.url, o.protocol, o.headers, body, v.name);
    });
    await v.after?.();
    nextRequest += o.concurrency;
  }
  for (let round = 0; round < o.rounds; round++) {
    const order = round % 2 === 0 ? o.variants : [...o.variants].reverse();
    for (const v of order) {
      const firstRequest = nextRequest;
      nextRequest += o.requests;
      const bodies = Array.from(
        { length: o.requests },
        (_, i) => new Uint8Array(v.body(firstRequest + i, o.traces)),
      );
      await v.before?.();
      await settle(o.ch.client);
      const cpu0 = Object.fromEntries(Object.entries(o.pids).map(([k, pid]) => [k, cpuSecondsTree(pid)]));
      const started = performance.now();
      let retries = 0;
      await pool(o.requests, o.concurrency, async (i) => {
        retries += await send(o.url, o.protocol, o.headers, bodies[i]!, v.name);
      });
      const seconds = (performance.now() - started) / 1000;
      const cpu = Object.fromEntries(
        Object.entries(o.pids).map(([k, pid]) => [k, cpuSecondsTree(pid) - cpu0[k]!]),
      );
      await v.after?.();
      out.get(v.name)!.push({
        firstRequest,
        spans: o.requests * o.traces * o.spansPerTrace,
        seconds,
        cpu,
        retries,
      });
    }
  }
  return out;
}

const rate = (p: Phase) => p.spans / p.seconds;
const total = (ps: Phase[], f: (p: Phase) => number) => ps.reduce((a, p) => a + f(p), 0);

/**
 * Prints `subject` against `baseline`: throughput over all rounds and each round's ratio (median
 * and range), and each watched process's CPU per 10k spans.
 */
export function printPair(label: string, subject: Phase[], baseline: Phase[]): void {
  const perRound = subject.map((p, i) => rate(p) / rate(baseline[i]!));
  const [s, b] = [subject, baseline].map((ps) => total(ps, (p) => p.spans) / total(ps, (p) => p.seconds));
  line(`${label}: spans/s`, `${Math.round(s!)} against ${Math.round(b!)}`);
  line(
    '  ratio of throughput (all rounds; per round median, range)',
    `${ratio(s!, b!)} (${quantile(perRound, 0.5).toFixed(3)}, ${Math.min(...perRound).toFixed(3)}-${Math.max(...perRound).toFixed(3)})`,
  );
  line('  ratio of each round, in order', perRound.map((r) => r.toFixed(3)).join(', '));
  for (const name of Object.keys(subject[0]!.cpu)) {
    const per10k = (ps: Phase[]) => (total(ps, (p) => p.cpu[name]!) * 10_000) / total(ps, (p) => p.spans);
    line(
      `  ${name} CPU s per 10k spans, ratio`,
      `${per10k(subject).toFixed(2)} against ${per10k(baseline).toFixed(2)}, ${ratio(per10k(subject), per10k(baseline))}`,
    );
  }
  // What the machine spent per span over every watched process: on two shared cores the figure a
  // throughput ratio cannot resolve to a few per cent.
  const all = (ps: Phase[]) =>
    (total(ps, (p) => Object.values(p.cpu).reduce((a, c) => a + c, 0)) * 10_000) / total(ps, (p) => p.spans);
  line(
    '  all watched CPU s per 10k spans, ratio',
    `${all(subject).toFixed(2)} against ${all(baseline).toFixed(2)}, ${ratio(all(subject), all(baseline))}`,
  );
  const retries = total([...subject, ...baseline], (p) => p.retries);
  if (retries > 0) line('  requests answered 429/503 and sent again', String(retries));
}
