/** The upgrade rule of server/contract/upgrade.ts: which database an image's migrations may start from. */
import { describe, expect, it } from 'vitest';
import { readSummary } from '../../operator/planner/termination.ts';
import { preflightSummarySchema, type SchemaReport, upgradeRefusal } from '../../server/contract/upgrade.ts';

describe('upgradeRefusal', () => {
  const cases: { name: string; report: SchemaReport; refused?: RegExp }[] = [
    {
      name: 'the next image from the version it starts at',
      report: { database: 47, latest: 50, upgradableFrom: 47 },
    },
    {
      name: 'a database newer than the oldest start',
      report: { database: 48, latest: 50, upgradableFrom: 40 },
    },
    {
      name: 'an image with every migration since the first',
      report: { database: 37, latest: 50, upgradableFrom: 0 },
    },
    {
      name: 'the same schema (a rebuild of the image)',
      report: { database: 50, latest: 50, upgradableFrom: 47 },
    },
    {
      name: 'an empty database, whatever the image squashed',
      report: { database: 0, latest: 55, upgradableFrom: 50 },
    },
    {
      name: 'a skip over migrations that require order',
      report: { database: 47, latest: 55, upgradableFrom: 50 },
      refused:
        /schema version 47, older than 50, the oldest this image migrates from: upgrade through an image whose migrations start at or below 47 first/,
    },
    {
      name: 'one version short of the oldest start',
      report: { database: 49, latest: 55, upgradableFrom: 50 },
      refused: /schema version 49, older than 50/,
    },
    {
      name: 'an older image on a newer database',
      report: { database: 50, latest: 47, upgradableFrom: 0 },
      refused: /schema version 50, newer than 47, the newest this image knows/,
    },
  ];
  for (const c of cases)
    it(`${c.refused ? 'refuses' : 'allows'} ${c.name}`, () => {
      const why = upgradeRefusal(c.report);
      if (c.refused) expect(why).toMatch(c.refused);
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
