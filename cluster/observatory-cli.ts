// The observatory CLI run to completion on this machine, as a Job's container would run it, with a
// clean environment: only what the caller passes, plus PATH, HOME and quiet logs.
import { spawn } from 'node:child_process';
import { observatoryCli } from './paths.ts';

export type Env = Record<string, string | undefined>;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** PATH, HOME, warn-level logs and no drain delay, plus the given variables (undefined: left out). */
export function cliEnv(env: Env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    LOG_LEVEL: 'warn',
    SERVICE_SHUTDOWN_DRAIN_SECONDS: '0',
  };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** Runs `observatory ...`; SIGKILL after timeoutMs. */
export function cli(args: string[], env: Env = {}, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [observatoryCli, ...args], {
      env: cliEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
