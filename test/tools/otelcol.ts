/**
 * A minimal OpenTelemetry Collector for the tests, built from go.opentelemetry.io/collector's own
 * modules through the Go module proxy with the project's builder (OCB): the OTLP receiver, the
 * batch processor and the OTLP/gRPC exporter, at one pinned version. Built once (niced, under a
 * lock) into .cache/tools/otelcol-<version>/, as cluster/go-tools.ts builds the other tools.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { goBinary, toolsCache } from '../../cluster/paths.ts';
import { withFileLock } from '../../server/platform/datastores/lock-file.ts';

const run = promisify(execFile);
const VERSION = 'v0.165.0';
const NAME = 'otelcol-observatory';

const manifest = (out: string) => `dist:
  name: ${NAME}
  description: OTLP in, OTLP/gRPC out
  output_path: ${out}
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver ${VERSION}
processors:
  - gomod: go.opentelemetry.io/collector/processor/batchprocessor ${VERSION}
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/otlpexporter ${VERSION}
`;

async function niced(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  await run('nice', ['-n', '10', command, ...args], {
    cwd,
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 1_500_000,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`${command} ${args.join(' ')} failed: ${error.stderr || error.message}`);
  });
}

/** The collector binary's path; builds it on the first call on this machine (minutes). */
export async function ensureOtelcol(log: (line: string) => void = () => {}): Promise<string> {
  const dir = join(toolsCache, `otelcol-${VERSION}`);
  const binary = join(dir, NAME);
  if (existsSync(binary)) return binary;
  await withFileLock(`${dir}.lock`, async () => {
    if (existsSync(binary)) return;
    log(`building the OpenTelemetry Collector ${VERSION} from the Go module proxy (first run only)...`);
    await mkdir(toolsCache, { recursive: true });
    const staging = await mkdtemp(join(toolsCache, '.otelcol-build-'));
    try {
      const env = { GOBIN: staging, CGO_ENABLED: '0', GOFLAGS: '' };
      await niced(
        goBinary(),
        ['install', `go.opentelemetry.io/collector/cmd/builder@${VERSION}`],
        env,
        staging,
      );
      await writeFile(join(staging, 'manifest.yaml'), manifest(join(staging, 'out')));
      await niced(join(staging, 'builder'), ['--config', join(staging, 'manifest.yaml')], env, staging);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await rename(join(staging, 'out', NAME), binary);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  });
  return binary;
}
