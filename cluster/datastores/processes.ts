import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { freePort } from '../ports.ts';

/** Work that must happen even when the calling process ends without calling stop(): synchronous only. */
const exitCleanups: Array<() => void> = [];
let hooksInstalled = false;

function runExitCleanups(): void {
  // Last registered first, like nested try/finally: a process dies before its directory goes.
  for (const cleanup of exitCleanups.splice(0).reverse()) {
    try {
      cleanup();
    } catch {
      // Best effort: the process is exiting anyway.
    }
  }
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', runExitCleanups);
  // Children run in their own process groups, so a Ctrl-C in the terminal does not reach them, and a
  // signal ends Node without 'exit'. Only when nobody else handles the signal (so we do not change
  // its meaning) do we clean up and re-raise it, which then terminates as it would have. A listener
  // added later got this delivery too and decides itself; re-raising would call it twice.
  if (!isMainThread) return;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    if (process.listenerCount(signal) > 0) continue;
    const onSignal = () => {
      runExitCleanups();
      process.removeListener(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/** Registers synchronous cleanup for process exit; the returned function unregisters it. */
export function onProcessExit(cleanup: () => void): () => void {
  installExitHooks();
  exitCleanups.push(cleanup);
  return () => {
    const i = exitCleanups.indexOf(cleanup);
    if (i >= 0) exitCleanups.splice(i, 1);
  };
}

/**
 * Removes a directory that a dying process may still be changing. rmSync(force) stops silently at
 * the first file that vanishes under it (seen with postgres unlinking postmaster.pid during its
 * shutdown), so repeat until the directory is gone. Synchronous, for use at exit too.
 */
export function removeDirSync(dir: string): void {
  for (let attempt = 0; attempt < 20 && existsSync(dir); attempt++) {
    if (attempt > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // ENOTEMPTY when a file appeared meanwhile: the next round takes it.
    }
  }
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const OUTPUT_LIMIT = 64 * 1024;
/** How long a finished command's output may still be arriving after it exited. */
const OUTPUT_DRAIN_MS = 2_000;

/** A child process in its own process group, killed with its group when the calling process exits. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Resolves when the child has exited (never rejects). */
  readonly exited: Promise<ExitInfo>;
  /** Set once the child has exited. */
  exitInfo(): ExitInfo | undefined;
  /** The last 64 KiB of its stdout and stderr, interleaved. */
  output(): string;
  /** Resolves once its stdout and stderr are closed (a grandchild may hold them open longer). */
  readonly drained: Promise<void>;
  /** Signals the whole process group (default: its killSignal) and waits; SIGKILL after `graceMs`. */
  kill(signal?: NodeJS.Signals, graceMs?: number): Promise<ExitInfo>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Kill the group when the calling process exits (default true). Off for apt: a killed dpkg breaks the system. */
  killOnExit?: boolean;
  /**
   * Sent to the group at calling process exit and by kill() without a signal (default SIGKILL). A child
   * that must clean up after itself (postgres: its SysV shared memory) gets a catchable one.
   */
  killSignal?: NodeJS.Signals;
}

export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: StartOptions = {},
): ManagedProcess {
  // detached: own process group, so one kill(-pid) also reaches grandchildren (runuser's child,
  // postgres backends), and the child is not in the terminal's foreground group.
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  // 'exit' can come before the last output is read; 'close' comes after both pipes closed.
  const drained = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let info: ExitInfo | undefined;
  let unregister = () => {};
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('error', (err) => {
      // spawn failed (no such binary): there is no process to wait for.
      append(Buffer.from(`${err.message}\n`));
      info ??= { code: null, signal: null };
      unregister();
      resolve(info);
    });
    child.once('exit', (code, signal) => {
      info ??= { code, signal };
      unregister();
      resolve(info);
    });
  });
  const pid = child.pid ?? -1;
  const killSignal = options.killSignal ?? 'SIGKILL';
  if (pid > 0 && options.killOnExit !== false) {
    unregister = onProcessExit(() => signalGroup(pid, killSignal));
  }

  return {
    name,
    pid,
    exited,
    exitInfo: () => info,
    output: () => output,
    drained,
    async kill(signal = killSignal, graceMs = 5_000) {
      if (info) return info;
      signalGroup(pid, signal);
      const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the whole group is gone already.
  }
}

/** Thrown when a child fails to become ready; carries its output so the cause is visible. */
export class ProcessStartError extends Error {
  readonly output: string;
  readonly exit: ExitInfo | undefined;
  constructor(message: string, output: string, exit: ExitInfo | undefined) {
    super(`${message}\n--- output ---\n${output.trimEnd() || '(none)'}`);
    this.name = 'ProcessStartError';
    this.output = output;
    this.exit = exit;
  }
}

export interface ReadyOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `probe` until it returns true. Fails early with the child's output when the child exits,
 * and kills the child on timeout so a half-started server does not linger.
 */
export async function waitUntilReady(
  child: ManagedProcess,
  probe: () => Promise<boolean>,
  { timeoutMs = 30_000, intervalMs = 50 }: ReadyOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exit = child.exitInfo();
    if (exit) {
      throw new ProcessStartError(
        `${child.name} exited before it was ready (code ${exit.code}, signal ${exit.signal})`,
        child.output(),
        exit,
      );
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      await child.kill();
      throw new ProcessStartError(
        `${child.name} was not ready within ${timeoutMs} ms`,
        child.output(),
        undefined,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

const PORT_ATTEMPTS = 3;

/**
 * Starts a server on a free port of host. A port free at the probe can still be bound by someone
 * else before the server binds it; then `start` fails with "address in use" and gets another port.
 * `start` must leave nothing running when it throws, as waitUntilReady does for its child.
 */
export async function startOnFreePort<T>(host: string, start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort(host));
    } catch (err) {
      const portTaken = err instanceof ProcessStartError && /address already in use/i.test(err.output);
      if (!portTaken || attempt >= PORT_ATTEMPTS) throw err;
    }
  }
}

/** Runs a command to completion; rejects with its output when it fails. */
export async function runCommand(
  name: string,
  command: string,
  args: string[],
  options: StartOptions & { timeoutMs?: number } = {},
): Promise<string> {
  const child = startProcess(name, command, args, options);
  const timer = setTimeout(() => void child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
  const exit = await child.exited.finally(() => clearTimeout(timer));
  await Promise.race([child.drained, new Promise((r) => setTimeout(r, OUTPUT_DRAIN_MS))]);
  if (exit.code !== 0) {
    throw new ProcessStartError(
      `${name} failed (code ${exit.code}, signal ${exit.signal}): ${command} ${args.join(' ')}`,
      child.output(),
      exit,
    );
  }
  return child.output();
}

const APT_LOCK = '/tmp/observatory-test-apt.lock';

/**
 * Installs Debian packages when `isPresent()` says they are missing. Several test files start at
 * once, and dpkg fails rather than waits when another apt holds its lock, so installs go one at a
 * time behind flock(1); the kernel drops that lock if the holder dies. `apt-get update` runs only
 * when the plain install fails, since the package lists are usually current enough.
 */
export async function ensureAptPackages(packages: string[], isPresent: () => boolean): Promise<void> {
  if (isPresent()) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`${packages.join(' ')} not installed, and only root can apt-get install it`);
  }
  const list = packages.join(' ');
  const install = `apt-get install -y -q --no-install-recommends ${list}`;
  // Re-checking inside the lock is apt's job: installing what is installed is a quick no-op.
  const script = `${install} || { apt-get update -q && ${install}; }`;
  await runCommand(`apt-get install ${list}`, 'flock', ['-w', '900', APT_LOCK, 'sh', '-c', script], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    killOnExit: false,
    timeoutMs: 1_000_000,
  });
  if (!isPresent()) throw new Error(`apt-get installed ${list}, but it is still not usable`);
}
