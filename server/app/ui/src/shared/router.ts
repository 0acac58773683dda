/** Path-based navigation without a library: the pages are few and their paths fixed. */
import { useEffect, useState } from 'react';

/** A project's pages that take nothing but the project: `/project/<id>/<page>`. */
const PROJECT_PAGES = [
  'sessions',
  'users',
  'datasets',
  'alerts',
  'settings',
  'prompts',
  'models',
  'evaluations',
] as const;
type ProjectPage = (typeof PROJECT_PAGES)[number];

export type Route =
  | { page: 'login' }
  | { page: 'projects' }
  | { page: 'observations'; projectId: string }
  | { page: 'trace'; projectId: string; traceId: string }
  | { page: ProjectPage; projectId: string }
  | { page: 'invite'; token: string }
  | { page: 'dataset'; projectId: string; datasetId: string }
  | { page: 'dashboards'; projectId: string }
  | { page: 'dashboard'; projectId: string; dashboardId: string }
  | { page: 'queues'; projectId: string }
  | { page: 'queue'; projectId: string; queueId: string }
  | { page: 'migration' }
  | { page: 'account' }
  | { page: 'notFound' };

export function routeOf(pathname: string): Route {
  if (pathname === '/login') return { page: 'login' };
  if (pathname === '/' || pathname === '/projects') return { page: 'projects' };
  if (pathname === '/migration') return { page: 'migration' };
  if (pathname === '/account') return { page: 'account' };
  const invite = pathname.match(/^\/invite\/([^/]+)\/?$/);
  if (invite) return { page: 'invite', token: decodeURIComponent(invite[1]!) };
  const g = pathname.match(/^\/project\/([^/]+)\/([a-z]+)\/?$/);
  if (g && (PROJECT_PAGES as readonly string[]).includes(g[2]!))
    return {
      page: g[2] as ProjectPage,
      projectId: decodeURIComponent(g[1]!),
    };
  const d = pathname.match(/^\/project\/([^/]+)\/datasets\/([^/]+)\/?$/);
  if (d)
    return { page: 'dataset', projectId: decodeURIComponent(d[1]!), datasetId: decodeURIComponent(d[2]!) };
  const dl = pathname.match(/^\/project\/([^/]+)\/dashboards\/?$/);
  if (dl) return { page: 'dashboards', projectId: decodeURIComponent(dl[1]!) };
  const db = pathname.match(/^\/project\/([^/]+)\/dashboards\/([^/]+)\/?$/);
  if (db)
    return {
      page: 'dashboard',
      projectId: decodeURIComponent(db[1]!),
      dashboardId: decodeURIComponent(db[2]!),
    };
  const ql = pathname.match(/^\/project\/([^/]+)\/annotation-queues\/?$/);
  if (ql) return { page: 'queues', projectId: decodeURIComponent(ql[1]!) };
  const qr = pathname.match(/^\/project\/([^/]+)\/annotation-queues\/([^/]+)\/?$/);
  if (qr)
    return { page: 'queue', projectId: decodeURIComponent(qr[1]!), queueId: decodeURIComponent(qr[2]!) };
  const t = pathname.match(/^\/project\/([^/]+)\/traces\/([^/]+)\/?$/);
  if (t) return { page: 'trace', projectId: decodeURIComponent(t[1]!), traceId: decodeURIComponent(t[2]!) };
  const m = pathname.match(/^\/project\/([^/]+)(?:\/observations)?\/?$/);
  if (m) return { page: 'observations', projectId: decodeURIComponent(m[1]!) };
  return { page: 'notFound' };
}

export function navigate(path: string): void {
  window.history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const on = () => setPath(window.location.pathname);
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return path;
}
