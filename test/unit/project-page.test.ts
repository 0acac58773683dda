import { describe, expect, it } from 'vitest';
import { projectPageSql } from '../../server/platform/datastores/project-page.ts';

// The statements as the stores wrote them by hand before they shared projectPage.
const ALERT_RULE_SELECT = `SELECT r.*, COALESCE((SELECT array_agg(c.channel_id ORDER BY c.channel_id)
  FROM alert_rule_channels c WHERE c.rule_id = r.id), '{}') AS channel_ids FROM alert_rules r`;

describe('projectPageSql', () => {
  it.each([
    {
      source: 'alert_channels',
      orderBy: 'created_at, id',
      list: 'SELECT * FROM alert_channels WHERE project_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3',
      count: 'SELECT count(*)::int AS n FROM alert_channels WHERE project_id = $1',
    },
    {
      source: { table: 'alert_rules', select: ALERT_RULE_SELECT, alias: 'r' },
      orderBy: 'r.created_at, r.id',
      list: `${ALERT_RULE_SELECT} WHERE r.project_id = $1 ORDER BY r.created_at, r.id LIMIT $2 OFFSET $3`,
      count: 'SELECT count(*)::int AS n FROM alert_rules WHERE project_id = $1',
    },
  ])('$orderBy', ({ source, orderBy, list, count }) => {
    expect(projectPageSql(source, orderBy)).toEqual({ list, count });
  });
});
