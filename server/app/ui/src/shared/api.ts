/** The UI's calls to its JSON routes under /api/ui: same origin, cookies, the CSRF header on writes. */

export interface NumberedPage<T> {
  data: T[];
  meta: { page: number; limit: number; totalItems: number; totalPages: number };
}

export interface Page<T> {
  data: T[];
  meta: { cursor?: string };
}

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

let csrfToken = '';
export const setCsrfToken = (t: string) => {
  csrfToken = t;
};

export const queryString = (query: Record<string, string | undefined>) => {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') qs.set(k, v);
  return qs.toString();
};
export const projectPath = (id: string) => `/api/ui/projects/${encodeURIComponent(id)}`;

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const payload = (await res.json().catch(() => ({}))) as {
    message?: string;
    error?: string;
    details?: { field?: string };
  };
  if (!res.ok) {
    const field = payload.details?.field;
    const text = [payload.message, payload.error].filter(Boolean).join(': ') + (field ? ` (${field})` : '');
    throw new ApiError(res.status, text || `${res.status} ${res.statusText}`);
  }
  return payload as T;
}

/** A project's rules under `collection`: the first page of 100, create, and update one. */
export function ruleCalls<R>(collection: string) {
  const path = (id: string) => `${projectPath(id)}/${collection}`;
  return {
    list: (id: string) => call<NumberedPage<R>>('GET', `${path(id)}?limit=100`),
    create: (id: string, body: Record<string, unknown>) => call<R>('POST', path(id), body),
    update: (id: string, ruleId: string, body: Record<string, unknown>) =>
      call<R>('PATCH', `${path(id)}/${encodeURIComponent(ruleId)}`, body),
  };
}
