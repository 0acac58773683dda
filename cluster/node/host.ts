// Commands on the machine itself (ip, iptables, sysctl), as root.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function sh(file: string, args: string[]): Promise<string> {
  const { stdout } = await run(file, args, { maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { stderr?: string; message: string }) => {
      throw new Error(`${file} ${args.join(' ')}: ${(error.stderr ?? '').trim() || error.message}`);
    },
  );
  return stdout;
}

/** Runs a command whose failure is expected when there is nothing to undo. */
export async function shQuiet(file: string, args: string[]): Promise<boolean> {
  return sh(file, args).then(
    () => true,
    () => false,
  );
}
