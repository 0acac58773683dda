// `npm run cluster:up` / `npm run cluster:down`: a local cluster for people, kept running in the
// background. `up` starts a detached `serve` process (pid in .cache/cluster.pid) and returns once
// the cluster is ready; `down` stops it; the cluster dies with the serve process in any case.
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { controlPlaneDir } from '../../cluster/control-plane-binary.ts';
import { sleep } from '../../cluster/wait.ts';
import { startCluster } from './harness.ts';
import { cacheRoot } from './paths.ts';

const pidFile = join(cacheRoot, 'cluster.pid');
const infoFile = join(cacheRoot, 'cluster.json');
const logFile = join(cacheRoot, 'cluster.log');
const dataDir = join(cacheRoot, 'cluster');

interface Info {
  pid: number;
  kubeconfigPath: string;
  server: string;
  startupMs: number;
  warnings: string[];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function runningPid(): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  return pid && alive(pid) ? pid : undefined;
}

function readInfo(): Info | undefined {
  try {
    return JSON.parse(readFileSync(infoFile, 'utf8')) as Info;
  } catch {
    return undefined;
  }
}

function printInfo(info: Info): void {
  console.log(info.kubeconfigPath);
  console.error(`cluster running at ${info.server} (pid ${info.pid}, ready in ${info.startupMs}ms)`);
  console.error(`  export KUBECONFIG=${info.kubeconfigPath}`);
  console.error(`  ${join(controlPlaneDir, 'kubectl')} get nodes   # kubectl of the server's release`);
  console.error('  npm run cluster:down   # to stop it');
  for (const warning of info.warnings) console.error(warning);
}

async function up(): Promise<number> {
  const pid = runningPid();
  const existing = readInfo();
  if (pid && existing && existing.pid === pid) {
    printInfo(existing);
    return 0;
  }
  await rm(infoFile, { force: true });
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve'], {
    detached: true,
    stdio: ['ignore', log, log],
  });
  child.unref();
  console.error(
    `starting the cluster (log: ${logFile}); the first run builds the control plane (~10 minutes)...`,
  );
  for (;;) {
    const info = readInfo();
    if (info && info.pid === child.pid) {
      printInfo(info);
      return 0;
    }
    if (child.pid === undefined || !alive(child.pid)) {
      console.error(`the cluster failed to start; see ${logFile}:`);
      console.error(readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-20).join('\n'));
      return 1;
    }
    await sleep(250);
  }
}

async function serve(): Promise<void> {
  // A person still gets a cluster when crds/ is broken; the warning is in the log and printed by `up`.
  const warnings: string[] = [];
  const log = (line: string) => {
    console.log(line);
    if (line.startsWith('warning:')) warnings.push(line);
  };
  const cluster = await startCluster({ dataDir, crdErrors: 'warn', log });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping the cluster`);
    await cluster.stop();
    await rm(pidFile, { force: true });
    await rm(infoFile, { force: true });
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
    process.on(signal, () => void shutdown(signal));
  await writeFile(pidFile, String(process.pid));
  const info: Info = {
    pid: process.pid,
    kubeconfigPath: cluster.kubeconfigPath,
    server: cluster.server,
    startupMs: cluster.startupMs,
    warnings,
  };
  await writeFile(infoFile, `${JSON.stringify(info, null, 2)}\n`);
}

async function down(): Promise<number> {
  const pid = runningPid();
  if (!pid) {
    console.error('no cluster is running');
    await rm(pidFile, { force: true });
    await rm(infoFile, { force: true });
    return 0;
  }
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(200);
  // Still there after 20s: kill it; its components die with it (parent-death signal).
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  await rm(pidFile, { force: true });
  await rm(infoFile, { force: true });
  await rm(dataDir, { recursive: true, force: true });
  console.error('cluster stopped');
  return 0;
}

const command = process.argv[2];
if (command === 'up') process.exitCode = await up();
else if (command === 'down') process.exitCode = await down();
else if (command === 'serve') await serve();
else {
  console.error('usage: node test/cluster/cli.ts up|down');
  process.exitCode = 2;
}
