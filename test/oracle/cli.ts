/**
 * `npm run oracle -- --runs N [--seed S [--path P]] [--minutes M]`: long runs of the oracle on the real
 * services, one progress line per history; exits 1 with the smallest failing history found.
 */
import { parseArgs } from 'node:util';
import { checkHistories, report } from './check.ts';
import { startStores } from './runner.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    seed: { type: 'string' },
    path: { type: 'string' },
    minutes: { type: 'string' },
  },
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() ^ (process.pid << 8) : Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  process.stderr.write('usage: npm run oracle -- --runs N [--seed S [--path P]] [--minutes M]\n');
  process.exit(2);
}
const stamp = () => new Date().toISOString().slice(11, 19);
const log = (line: string) => process.stdout.write(`${stamp()} ${line}\n`);

log(`oracle: ${runs} histories, seed ${seed}`);
const stores = await startStores();
let code = 0;
try {
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
} finally {
  await stores.stop();
}
process.exit(code);
