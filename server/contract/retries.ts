/**
 * How an admin retries a failed historic backfill step, named once for everyone who tells them:
 * the operator's annotations on the ObservabilityService (kubectl, GitOps), the CLI command for
 * deployments without the operator, and the web's migration page that shows both.
 */

/** The API group of the ObservabilityService resource, which prefixes its annotations. */
export const API_GROUP = 'observatory.dev';

/** Annotations users (kubectl, GitOps) set on the object. */
export const ANNOTATIONS = {
  /** `"<generation>"`: approves the cutover of that generation (Manual approval). */
  approveCutover: `${API_GROUP}/approve-cutover`,
  /** `"<step>"` or `"<step>.<n>"`: retries the failed backfill step; a new value is a new request. */
  retryBackfill: `${API_GROUP}/retry-backfill`,
  /** `"<purpose>"` or `"<purpose>.<n>"` (preflight, migrate, rollback, cleanup): retries a failed Job. */
  retryJob: `${API_GROUP}/retry-job`,
  /** `"<backup id>"` (or any new value, from which the operator derives one): takes a backup now. */
  backupRequested: `${API_GROUP}/backup-requested`,
  /** `"<backup id>"` or `"<backup id>.<n>"`: restores that backup; a new value is a new request. */
  restoreRequested: `${API_GROUP}/restore-requested`,
} as const;

/** The short name kubectl knows the resource by. */
export const RESOURCE_SHORT_NAME = 'obsvc';

/** `observatory backfill retry --step N`: resumes a failed step from its last finished chunk. */
export const backfillRetryCommand = (step: number) => `observatory backfill retry --step ${step}`;

/** The kubectl command that sets `annotation` to `value` on the resource `name` (in `namespace`). */
export const annotateCommand = (name: string, annotation: string, value: string, namespace?: string) =>
  `kubectl ${namespace ? `-n ${namespace} ` : ''}annotate ${RESOURCE_SHORT_NAME}/${name} ${annotation}=${value} --overwrite`;

/** The object an operator-run process belongs to: `<namespace>/<name>`, both DNS-1123 names. */
export interface OperatorObject {
  namespace: string;
  name: string;
}
const DNS_1123 = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Parses `<namespace>/<name>`; undefined when the value is not of that form. */
export function parseOperatorObject(value: string): OperatorObject | undefined {
  const [namespace, name, ...rest] = value.split('/');
  if (rest.length > 0 || !namespace || !name || !DNS_1123.test(namespace) || !DNS_1123.test(name))
    return undefined;
  return { namespace, name };
}
