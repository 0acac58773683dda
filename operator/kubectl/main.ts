/** Entry of the `kubectl-observatory` executable (bin/kubectl-observatory runs it under Node 24). */
import { run } from './commands.ts';

process.exitCode = await run(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
});
