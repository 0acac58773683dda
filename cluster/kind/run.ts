// Runs a command to completion with its output captured; never throws for a non-zero exit.
import { spawn } from 'node:child_process';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string } = {},
): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: { ...process.env, ...options.env }, cwd: options.cwd });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => resolve({ code: -1, stdout: '', stderr: error.message }));
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
      }),
    );
    child.stdin.end(options.input);
  });
}

/** As run, but a non-zero exit is an error naming the command and its last output. */
export async function must(
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string } = {},
): Promise<string> {
  const result = await run(file, args, options);
  if (result.code !== 0) {
    const tail = `${result.stdout}${result.stderr}`.trim().split('\n').slice(-20).join('\n');
    throw new Error(`${file} ${args.slice(0, 3).join(' ')} failed (exit ${result.code}): ${tail}`);
  }
  return result.stdout;
}
