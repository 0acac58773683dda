/**
 * The oracle as a fast-check property: for every generated history, `events_full` after the run
 * equals the model. On a difference fast-check shrinks the plan (each try is a whole run on the
 * real services) and the failure names the smallest history found, its steps and differing rows.
 */
import fc from 'fast-check';
import { historyPlan } from './generate.ts';
import { describeSteps, flatten, type HistoryPlan } from './history.ts';
import { runHistory, type Stores } from './runner.ts';

export interface CheckOptions {
  runs: number;
  seed?: number;
  /** fast-check's replay path of one history (printed with a failure). */
  path?: string;
  /** Stop generating and shrinking after this long (every try is a whole history on the real services). */
  timeLimitMs?: number;
  progress?: (line: string) => void;
}

export class OracleFailure extends Error {
  override name = 'OracleFailure';
}

export async function checkHistories(
  stores: Stores,
  options: CheckOptions,
): Promise<fc.RunDetails<[HistoryPlan]>> {
  let n = 0;
  let failedOnce = false;
  const progress = options.progress ?? (() => {});
  const property = fc.asyncProperty(historyPlan, async (plan) => {
    const steps = flatten(plan);
    const index = n++;
    const started = Date.now();
    progress(`history ${index}${failedOnce ? ' (shrinking)' : ''}: ${steps.length} steps`);
    const result = await runHistory(stores, steps, index);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (result.diffs.length === 0) {
      progress(`history ${index}: ok in ${seconds} s`);
      return;
    }
    failedOnce = true;
    progress(`history ${index}: ${result.diffs.length} differences in ${seconds} s`);
    throw new OracleFailure(
      [
        `events_full differs from the model after this history:`,
        describeSteps(steps),
        '--- differences ---',
        ...result.diffs,
        '--- run log ---',
        ...result.log,
      ].join('\n'),
    );
  });
  return fc.check(property, {
    numRuns: options.runs,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.path === undefined ? {} : { path: options.path, endOnFailure: true }),
    ...(options.timeLimitMs === undefined ? {} : { interruptAfterTimeLimit: options.timeLimitMs }),
    markInterruptAsFailure: false,
  });
}

/** fast-check's report of a failed check: the seed, the shrunk counterexample and its error. */
export function report(details: fc.RunDetails<[HistoryPlan]>): string {
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : '';
  return [fc.defaultReportMessage(details) ?? '', error].join('\n');
}
