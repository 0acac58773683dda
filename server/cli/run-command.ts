import { ConfigError } from '../kernel/config/env.ts';
import { describeFailure, failureDetail } from './failure.ts';
import { UsageError } from './usage.ts';

export type Command = (args: string[]) => Promise<number>;

export interface RunOptions {
  /** Print the failure's stack (and causes) after its one line. */
  verbose?: boolean;
}

/**
 * Loads and runs one command of the CLI: a configuration or usage error prints `observatory <name>: message`
 * and exits 2; any other failure prints one line the same way and exits 1, its stack only with
 * `verbose`. Shared by the CLI and the operator's own entry (server/bin/operator.ts), so both end
 * the same way.
 */
export async function runCommand(
  name: string,
  load: () => Promise<Command>,
  args: string[],
  options: RunOptions = {},
): Promise<number> {
  try {
    return await (await load())(args);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      process.stderr.write(`observatory ${name}: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`observatory ${name}: ${describeFailure(err)}\n`);
    if (options.verbose) process.stderr.write(`${failureDetail(err)}\n`);
    return 1;
  }
}
