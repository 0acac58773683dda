// Child processes that never outlive the harness: each runs in its own process group (so its own
// children go with it), its output goes to a file, and every live group is killed when this
// process exits, whatever the reason.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, closeSync, openSync } from 'node:fs';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Supervised {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  readonly logPath: string;
  /** Settles when the process has exited (never rejects). */
  readonly exited: Promise<ExitStatus>;
  /** The exit status once exited, otherwise undefined. */
  status(): ExitStatus | undefined;
  /** SIGTERM to the whole group, SIGKILL after graceMs; resolves once the leader has exited. */
  stop(graceMs: number): Promise<ExitStatus>;
}

export interface StartOptions {
  name: string;
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logPath: string;
}

const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: process.kill is.
  process.on('exit', () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  });
}

/** Signals a process group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

export function startProcess(options: StartOptions): Supervised {
  installExitHook();
  const log = openSync(options.logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(options.file, options.args, {
      cwd: options.cwd,
      env: options.env,
      detached: true, // own process group: one kill reaches the process and its children
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
  let exitStatus: ExitStatus | undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
    // Spawning itself failed (e.g. no such file): say so where the process's output would be.
    child.once('error', (error) => {
      appendFileSync(options.logPath, `failed to start ${options.file}: ${error.message}\n`);
      exitStatus ??= { code: 127, signal: null };
      resolve(exitStatus);
    });
    child.once('exit', (code, signal) => {
      exitStatus = { code, signal };
      resolve(exitStatus);
    });
  });
  const pid = child.pid;
  if (pid === undefined) {
    return {
      name: options.name,
      pid: -1,
      child,
      logPath: options.logPath,
      exited,
      status: () => exitStatus,
      stop: () => exited,
    };
  }
  liveGroups.add(pid);
  // Once the leader is gone, anything it left in its group goes too.
  void exited.then(() => {
    signalGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
  });
  const stop = async (graceMs: number): Promise<ExitStatus> => {
    if (exitStatus) return exitStatus;
    signalGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), Math.max(0, graceMs));
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return { name: options.name, pid, child, logPath: options.logPath, exited, status: () => exitStatus, stop };
}
