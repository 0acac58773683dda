#!/usr/bin/env node
// `observatory operator` without the CLI's table of roles: the entry that scripts/build-operator.ts
// bundles into operator/dist/operator.mjs, the file the chart's operator container runs. The table
// loads each role through a dynamic import, which a bundle would have to carry as chunks of every
// role; this entry reaches the operator alone.
import { run } from '../cli/operator.ts';
import { runCommand } from '../cli/run-command.ts';

const args = process.argv.slice(2);
process.exitCode = await runCommand('operator', async () => run, args, {
  verbose: args.includes('--verbose'),
});
