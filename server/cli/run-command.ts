import { ConfigError } from '../config/env.ts';
import { UsageError } from './usage.ts';

export type Command = (args: string[]) => Promise<number>;

/**
 * Loads and runs one command of the CLI: a configuration or usage error prints `observatory <name>: message`
 * and exits 2; anything else propagates (the process fails with its stack). Shared by the CLI and
 * the operator's own entry (server/bin/operator.ts), so both end the same way.
 */
export async function runCommand(
  name: string,
  load: () => Promise<Command>,
  args: string[],
): Promise<number> {
  try {
    return await (await load())(args);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      process.stderr.write(`observatory ${name}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
