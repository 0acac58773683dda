/**
 * What most browser suites start with, so a test file starts with what it tests: the service
 * suite (datastores, `observatory web` in `events_only`, with Redis and a worker when asked, one
 * project), Debian's chromium, and the people who use the project.
 */
import { MODE_ENV } from '../fixtures/service.ts';
import {
  type ServiceSuite,
  type ServiceSuiteOptions,
  type Stoppable,
  startServiceSuite,
  stopServiceSuite,
} from '../fixtures/service-suite.ts';
import { createProjectMember } from '../fixtures/ui-client.ts';
import { type Chromium, startChromium } from './chromium.ts';

/** A person of the suite's project, signed in through the form with these credentials. */
export interface Person {
  userId: string;
  email: string;
  password: string;
}

export interface BrowserSuiteOptions<P extends string> extends ServiceSuiteOptions {
  /** Each person by the name the tests use, and their role in the project (address `<name>@example.com`). */
  people: Record<P, 'owner' | 'admin' | 'member' | 'viewer'>;
}

export interface BrowserSuite<P extends string> extends ServiceSuite {
  chromium: Chromium;
  people: Record<P, Person>;
}

export async function startBrowserSuite<P extends string>(
  options: BrowserSuiteOptions<P>,
): Promise<BrowserSuite<P>> {
  const env = options.env;
  const service = await startServiceSuite({
    ...options,
    env: (s) => ({ ...MODE_ENV.events_only, ...(typeof env === 'function' ? env(s) : env) }),
  });
  let chromium: Chromium | undefined;
  try {
    chromium = await startChromium();
    const named = Object.entries(options.people) as [P, string][];
    const created = await Promise.all(
      named.map(([name, role]) =>
        createProjectMember(service.env, `${name}@example.com`, service.project.projectId, role),
      ),
    );
    const people = Object.fromEntries(named.map(([name], i) => [name, created[i]!])) as Record<P, Person>;
    return { ...service, chromium, people };
  } catch (err) {
    await chromium?.close();
    await stopServiceSuite(service);
    throw err;
  }
}

/**
 * Closes the browser, the service suite and `more` (what the test started beside it), even after
 * a failed step or a suite that never started; what the browser's guard blocked and the pages'
 * uncaught errors.
 */
export async function closeBrowserSuite(
  suite: BrowserSuite<string> | undefined,
  ...more: Stoppable[]
): Promise<{ blocked: string[]; errors: string[] }> {
  const left = (await suite?.chromium.close()) ?? { blocked: [], errors: [] };
  await stopServiceSuite(suite, ...more);
  return left;
}
