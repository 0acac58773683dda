/**
 * The signed-in user's own sessions: listed (never with a token or its hash) and revoked one by
 * one or all but the current. Revoking deletes the row, so the other browser's next request finds
 * no session and is signed out.
 */
import type pg from 'pg';

export interface SessionSummary {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
  ip: string | null;
  current: boolean;
}

export async function sessionsOf(
  pool: pg.Pool,
  userId: string,
  currentId: string,
): Promise<SessionSummary[]> {
  const { rows } = await pool.query<{
    id: string;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
    user_agent: string | null;
    ip: string | null;
  }>(
    `SELECT id, created_at, last_seen_at, expires_at, user_agent, ip FROM user_sessions
      WHERE user_id = $1 AND expires_at > now() ORDER BY last_seen_at DESC, id`,
    [userId],
  );
  return rows.map((r) => ({
    id: r.id,
    createdAt: r.created_at.toISOString(),
    lastSeenAt: r.last_seen_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
    userAgent: r.user_agent,
    ip: r.ip,
    current: r.id === currentId,
  }));
}

/** Ends one of the user's sessions; false when the user has no such session. */
export async function revokeSession(pool: pg.Pool, userId: string, sessionId: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM user_sessions WHERE user_id = $1 AND id = $2', [
    userId,
    sessionId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Ends every session of the user but `keepId`; how many ended. */
export async function revokeOtherSessions(pool: pg.Pool, userId: string, keepId: string): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM user_sessions WHERE user_id = $1 AND id <> $2', [
    userId,
    keepId,
  ]);
  return rowCount ?? 0;
}
