// `npm run cluster:up` / `npm run cluster:down`: the local cluster (control plane and a real node,
// see local-cluster.ts) for people, kept running in the background. `up` starts a detached `serve`
// process and follows its log (each cold build is a step with its time) until the cluster is
// ready; `down` stops it, and its stop undoes what the node changed on the machine.
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processAlive } from '../server/platform/datastores/lock-file.ts';
import { startLocalCluster } from './local-cluster.ts';
import { cacheRoot } from './paths.ts';
import { sleep } from './wait.ts';

const pidFile = join(cacheRoot, 'local-cluster.pid');
const infoFile = join(cacheRoot, 'local-cluster.json');
const logFile = join(cacheRoot, 'local-cluster.log');

interface Info {
  pid: number;
  kubeconfigPath: string;
  server: string;
  kubectl: string;
}

function runningPid(): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  return pid && processAlive(pid) ? pid : undefined;
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
  console.error(`local cluster running at ${info.server} (pid ${info.pid})`);
  console.error(`  export KUBECONFIG=${info.kubeconfigPath}`);
  console.error(`  ${info.kubectl} get nodes -o wide`);
  console.error('  npm run cluster:down   # to stop it');
}

async function up(): Promise<number> {
  const pid = runningPid();
  const existing = readInfo();
  if (pid && existing && existing.pid === pid) {
    printInfo(existing);
    return 0;
  }
  await rm(infoFile, { force: true });
  await writeFile(logFile, '');
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve'], {
    detached: true,
    stdio: ['ignore', log, log],
  });
  child.unref();
  console.error(`starting the local cluster (log: ${logFile})`);
  let shown = 0;
  const follow = () => {
    const text = readFileSync(logFile, 'utf8');
    if (text.length > shown) process.stderr.write(text.slice(shown));
    shown = text.length;
  };
  for (;;) {
    follow();
    const info = readInfo();
    if (info && info.pid === child.pid) {
      printInfo(info);
      return 0;
    }
    if (child.pid === undefined || !processAlive(child.pid)) {
      follow();
      console.error(`the local cluster failed to start; see ${logFile}`);
      return 1;
    }
    await sleep(250);
  }
}

async function serve(): Promise<void> {
  const cluster = await startLocalCluster({ log: (line) => console.log(line) });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping the local cluster`);
    await cluster.stop().catch((error: Error) => console.log(error.message));
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
    kubectl: cluster.kubectlPath,
  };
  await writeFile(infoFile, `${JSON.stringify(info, null, 2)}\n`);
}

async function down(): Promise<number> {
  const pid = runningPid();
  if (!pid) {
    console.error('no local cluster is running');
    await rm(pidFile, { force: true });
    await rm(infoFile, { force: true });
    return 0;
  }
  process.kill(pid, 'SIGTERM');
  // The node's teardown (Pods, containerd, network, cgroups) takes a while.
  for (let i = 0; i < 600 && processAlive(pid); i++) await sleep(200);
  if (processAlive(pid)) {
    console.error(`the local cluster (pid ${pid}) did not stop within 120s; see ${logFile}`);
    return 1;
  }
  console.error('local cluster stopped');
  return 0;
}

const command = process.argv[2];
if (command === 'up') process.exitCode = await up();
else if (command === 'down') process.exitCode = await down();
else if (command === 'serve') await serve();
else {
  console.error('usage: node cluster/cli.ts up|down');
  process.exitCode = 2;
}
