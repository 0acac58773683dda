/**
 * `npm run oracle -- --runs N [--seed S [--path P]] [--minutes M] [--keep-going]`: long runs of the
 * oracle on the real services, one progress line per history. By default the first failing history
 * is shrunk by fast-check and printed; `--keep-going` runs all N histories without shrinking and
 * prints the differences of each failing one (to see several distinct problems in one run).
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { checkHistories, report } from './check.ts';
import { historyPlan } from './generate.ts';
import { describeSteps, flatten } from './history.ts';
import { runHistory, startStores } from './runner.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    seed: { type: 'string' },
    path: { type: 'string' },
    minutes: { type: 'string' },
    'keep-going': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() ^ (process.pid << 8) : Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  process.stderr.write(
    'usage: npm run oracle -- --runs N [--seed S [--path P]] [--minutes M] [--keep-going]\n',
  );
  process.exit(2);
}
const stamp = () => new Date().toISOString().slice(11, 19);
const log = (line: string) => process.stdout.write(`${stamp()} ${line}\n`);

log(`oracle: ${runs} histories, seed ${seed}`);
const stores = await startStores();
let code = 0;
try {
  if (values['keep-going']) {
    const plans = fc.sample(historyPlan, { seed, numRuns: runs });
    let failed = 0;
    for (const [i, plan] of plans.entries()) {
      const steps = flatten(plan);
      log(`history ${i + 1}/${runs}: ${steps.length} steps`);
      const result = await runHistory(stores, steps, i);
      if (result.diffs.length === 0) {
        log(`history ${i + 1}/${runs}: ok`);
        continue;
      }
      failed++;
      log(`history ${i + 1}/${runs}: ${result.diffs.length} differences`);
      process.stdout.write(`${describeSteps(steps)}\n--- differences ---\n${result.diffs.join('\n')}\n`);
    }
    log(`oracle: ${runs - failed} of ${runs} histories matched the model (seed ${seed})`);
    code = failed > 0 ? 1 : 0;
  } else {
    const details = await checkHistories(stores, {
      runs,
      seed,
      ...(values.path === undefined ? {} : { path: values.path }),
      ...(values.minutes === undefined ? {} : { timeLimitMs: Number(values.minutes) * 60_000 }),
      progress: log,
    });
    if (details.failed) {
      code = 1;
      process.stdout.write(`${report(details)}\n`);
    } else {
      log(`oracle: ${details.numRuns} histories matched the model (seed ${seed})`);
    }
  }
} finally {
  await stores.stop();
}
process.exit(code);
