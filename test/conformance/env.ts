/** What the conformance global setup hands to the test files, and the helpers they share. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pythonOf } from './python-sdks.ts';

export const MODES = ['legacy', 'dual', 'events_only'] as const;
export type Mode = (typeof MODES)[number];

export interface ModeServer {
  url: string;
  projectId: string;
  publicKey: string;
  secretKey: string;
}

export interface ConformanceEnv {
  workerUrl: string;
  modes: Record<Mode, ModeServer>;
}

export const auth = (s: ModeServer) =>
  `Basic ${Buffer.from(`${s.publicKey}:${s.secretKey}`).toString('base64')}`;

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
}

/** A request to the server's public API with the project's keys. */
export async function api<T = unknown>(
  s: ModeServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse<T>> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: {
      authorization: auth(s),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: keep the text for the assertion message.
  }
  return { status: res.status, body: parsed as T };
}

/** Settles within `ms` or fails naming what hung: an SDK's flush must not hold a suite. */
export async function bounded<T>(what: string, p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `probe` until it returns a value; fails with `what` after `withinMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  withinMs: number,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not seen within ${withinMs} ms${last ? ` (last error: ${String(last)})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

const PYTHON_DIR = join(import.meta.dirname, 'python');
const SCRIPT_TIMEOUT_MS = 90_000;

/**
 * Runs `python/<script>.py` with one SDK version's interpreter against a server; the script prints
 * one JSON document as its last line. The process is killed after a bounded time.
 */
export function runPython<T = Record<string, unknown>>(
  version: string,
  script: string,
  server: ModeServer,
  params: Record<string, string> = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(pythonOf(version), [join(PYTHON_DIR, `${script}.py`)], {
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        LANGFUSE_PUBLIC_KEY: server.publicKey,
        LANGFUSE_SECRET_KEY: server.secretKey,
        LANGFUSE_HOST: server.url,
        LANGFUSE_BASE_URL: server.url,
        LANGFUSE_TRACING_ENVIRONMENT: 'default',
        PYTHONUNBUFFERED: '1',
        CONFORMANCE_PROJECT_ID: server.projectId,
        ...params,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), SCRIPT_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0) {
        reject(
          new Error(
            `python ${version} ${script}.py exited with ${code ?? signal}\n${stderr.slice(-4000)}\n${stdout.slice(-2000)}`,
          ),
        );
        return;
      }
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(
          new Error(
            `python ${version} ${script}.py printed no JSON: ${stdout.slice(-2000)}\n${stderr.slice(-2000)}`,
          ),
        );
      }
    });
  });
}

/** A name unique to one case, for datasets, prompts and ids. */
export function caseName(...parts: string[]): string {
  return `${parts.join('-').replace(/[^a-zA-Z0-9-]/g, '-')}-${Date.now().toString(36)}`;
}

/**
 * A trace made by a real-time producer (OTLP JSON with the version 4 header), as the object of
 * comments and scores: it exists in every write mode, whatever the SDK under test can write there.
 */
export async function otlpTrace(s: ModeServer, name: string): Promise<string> {
  const traceId = randomBytes(16).toString('hex');
  const now = BigInt(Date.now()) * 1_000_000n;
  const res = await fetch(`${s.url}/api/public/otel/v1/traces`, {
    method: 'POST',
    headers: {
      authorization: auth(s),
      'content-type': 'application/json',
      'x-service-ingestion-version': '4',
    },
    body: JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'conformance' } }] },
          scopeSpans: [
            {
              scope: { name: 'conformance' },
              spans: [
                {
                  traceId,
                  spanId: randomBytes(8).toString('hex'),
                  name,
                  kind: 1,
                  startTimeUnixNano: String(now),
                  endTimeUnixNano: String(now + 1_000_000n),
                },
              ],
            },
          ],
        },
      ],
    }),
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status !== 200) throw new Error(`OTLP trace for ${name}: ${res.status} ${await res.text()}`);
  return traceId;
}

/** A short unique name, for objects whose names the service bounds (score configs: 35 characters). */
export function shortName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}
