/** The shell: loads the session, sends signed-out users to the sign-in page, picks the page. */
import { useCallback, useEffect, useState } from 'react';
import { Alerts } from './features/alerts/Alerts.tsx';
import { QueueReviewPage } from './features/annotation-queues/QueueReview.tsx';
import { Queues } from './features/annotation-queues/Queues.tsx';
import { Migration } from './features/backfill/Migration.tsx';
import { DashboardPage } from './features/dashboards/DashboardPage.tsx';
import { Dashboards } from './features/dashboards/Dashboards.tsx';
import { Datasets, DatasetView } from './features/datasets/Datasets.tsx';
import { Evaluations } from './features/evaluation/Evaluations.tsx';
import { Models } from './features/models/Models.tsx';
import { Projects } from './features/projects/Projects.tsx';
import { Settings } from './features/projects/Settings.tsx';
import { Prompts } from './features/prompts/Prompts.tsx';
import { Groupings } from './features/traces/Groupings.tsx';
import { Observations } from './features/traces/Observations.tsx';
import { Trace } from './features/traces/Trace.tsx';
import { Account } from './features/users/Account.tsx';
import { type SessionInfo, usersApi } from './features/users/api.ts';
import { Invite } from './features/users/Invite.tsx';
import { Login } from './features/users/Login.tsx';
import { setCsrfToken } from './shared/api.ts';
import { Link } from './shared/link.tsx';
import { navigate, routeOf, useLocation } from './shared/router.ts';

export function App() {
  const path = useLocation();
  const [session, setSession] = useState<SessionInfo | undefined>();
  const [error, setError] = useState<string | undefined>();

  const adopt = useCallback((s: SessionInfo) => {
    setCsrfToken(s.csrfToken);
    setSession(s);
  }, []);

  useEffect(() => {
    usersApi.session().then(adopt, (e: Error) => setError(e.message));
  }, [adopt]);

  if (error) return <main className="centered error">Cannot reach the service: {error}</main>;
  if (!session) return <main className="centered muted">Loading…</main>;
  const route = routeOf(path);
  // An invitation link opens before its account exists, and for a signed-in account alike.
  if (route.page === 'invite') return <Invite token={route.token} session={session} onSignedIn={adopt} />;
  if (!session.user) return <Login onSignedIn={adopt} />;
  if (route.page === 'login') {
    navigate('/');
    return null;
  }

  const togglePreview = async (enabled: boolean) => {
    await usersApi.setV4Preview(enabled);
    adopt(await usersApi.session());
  };

  const signOut = async () => {
    await usersApi.logout();
    adopt(await usersApi.session());
    navigate('/login');
  };

  return (
    <div className="app">
      <header className="topbar">
        <Link href="/" className="brand">
          Observatory
        </Link>
        <span className="muted">
          release {session.deployment.release} · write mode {session.deployment.writeMode}
        </span>
        {'projectId' in route && (
          <nav>
            {(
              [
                'dashboards',
                'observations',
                'sessions',
                'users',
                'datasets',
                'prompts',
                'annotation-queues',
                'evaluations',
                'alerts',
                'models',
                'settings',
              ] as const
            ).map((p) => (
              <Link key={p} href={`/project/${encodeURIComponent(route.projectId)}/${p}`}>
                {p}
              </Link>
            ))}
          </nav>
        )}
        <Link href="/migration">migration</Link>
        <span className="spacer" />
        {session.deployment.readPath.canToggle && (
          <label title="The version 4 read path (events tables) instead of the version 3 experience">
            <input
              type="checkbox"
              checked={session.deployment.readPath.path === 'v4'}
              onChange={(e) => void togglePreview(e.target.checked)}
            />{' '}
            Version 4 preview
          </label>
        )}
        <Link href="/account" title="Change password">
          {session.user.email}
        </Link>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      {route.page === 'projects' && <Projects landing={path === '/'} />}
      {route.page === 'observations' && (
        <Observations projectId={route.projectId} deployment={session.deployment} />
      )}
      {route.page === 'trace' && (
        <Trace
          projectId={route.projectId}
          traceId={route.traceId}
          readPath={session.deployment.readPath.path}
        />
      )}
      {route.page === 'datasets' && <Datasets projectId={route.projectId} />}
      {route.page === 'dataset' && <DatasetView projectId={route.projectId} datasetId={route.datasetId} />}
      {(route.page === 'sessions' || route.page === 'users') && (
        <Groupings projectId={route.projectId} grouping={route.page} deployment={session.deployment} />
      )}
      {route.page === 'dashboards' && <Dashboards projectId={route.projectId} />}
      {route.page === 'alerts' && <Alerts projectId={route.projectId} />}
      {route.page === 'settings' && <Settings projectId={route.projectId} />}
      {route.page === 'prompts' && <Prompts projectId={route.projectId} />}
      {route.page === 'models' && <Models projectId={route.projectId} />}
      {route.page === 'evaluations' && <Evaluations projectId={route.projectId} />}
      {route.page === 'dashboard' && (
        <DashboardPage projectId={route.projectId} dashboardId={route.dashboardId} />
      )}
      {route.page === 'queues' && <Queues projectId={route.projectId} />}
      {route.page === 'queue' && (
        <QueueReviewPage
          projectId={route.projectId}
          queueId={route.queueId}
          readPath={session.deployment.readPath.path}
        />
      )}
      {route.page === 'migration' && <Migration />}
      {route.page === 'account' && <Account email={session.user.email} onSignedIn={adopt} />}
      {route.page === 'notFound' && <main className="centered">Page not found.</main>}
    </div>
  );
}
