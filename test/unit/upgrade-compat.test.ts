/** The upgrade rule of server/contract/upgrade.ts: which database an image's migrations may start from. */
import { describe, expect, it } from 'vitest';
import { readSummary } from '../../operator/planner/termination.ts';
import { preflightSummarySchema, type SchemaReport, upgradeRefusal } from '../../server/contract/upgrade.ts';

describe('upgradeRefusal', () => {
  /** The database's schema version, the image's latest and the oldest it migrates from. */
  const report = (database: number, latest: number, upgradableFrom: number): SchemaReport => ({
    database,
    latest,
    upgradableFrom,
  });
  const cases: [name: string, report: SchemaReport, refused?: RegExp][] = [
    ['the next image from the version it starts at', report(47, 50, 47)],
    ['a database newer than the oldest start', report(48, 50, 40)],
    ['an image with every migration since the first', report(37, 50, 0)],
    ['the same schema (a rebuild of the image)', report(50, 50, 47)],
    ['an empty database, whatever the image squashed', report(0, 55, 50)],
    [
      'a skip over migrations that require order',
      report(47, 55, 50),
      /schema version 47, older than 50, the oldest this image migrates from: upgrade through an image whose migrations start at or below 47 first/,
    ],
    ['one version short of the oldest start', report(49, 55, 50), /schema version 49, older than 50/],
    [
      'an older image on a newer database',
      report(50, 47, 0),
      /schema version 50, newer than 47, the newest this image knows/,
    ],
  ];
  for (const [name, r, refused] of cases)
    it(`${refused ? 'refuses' : 'allows'} ${name}`, () => {
      const why = upgradeRefusal(r);
      if (refused) expect(why).toMatch(refused);
      else expect(why).toBeUndefined();
    });
});

describe('the preflight summary, as the operator reads it', () => {
  const schema = { database: 47, latest: 50, upgradableFrom: 40 };
  const cases: { name: string; message: string | undefined; parsed: boolean }[] = [
    { name: 'the summary', message: JSON.stringify({ ok: true, schema }), parsed: true },
    { name: 'no message', message: undefined, parsed: false },
    { name: 'text that is no JSON', message: 'every check passed', parsed: false },
    {
      name: 'a summary without the schema (an older image)',
      message: JSON.stringify({ ok: true }),
      parsed: false,
    },
    {
      name: 'a negative version',
      message: JSON.stringify({ ok: true, schema: { ...schema, database: -1 } }),
      parsed: false,
    },
  ];
  for (const c of cases)
    it(`${c.parsed ? 'reads' : 'rejects'} ${c.name}`, () => {
      expect(readSummary(preflightSummarySchema, c.message)).toEqual(
        c.parsed ? { ok: true, summary: { ok: true, schema } } : { ok: false, why: expect.any(String) },
      );
    });
});
