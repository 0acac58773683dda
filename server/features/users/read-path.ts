/**
 * Which read path a signed-in user's pages take (the spec's per-user preview of version 4): in
 * `dual` with `SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN` true each user toggles between the
 * version 3 experience and version 4; `events_only` has only version 4; every other deployment
 * only version 3. Pure: no I/O.
 */
import { ENV } from '../../contract/env.ts';
import { behaviourOf, type ModeSettings } from '../../contract/write-modes.ts';

export type ReadPath = 'v3' | 'v4';

export interface ReadPathChoice {
  path: ReadPath;
  /** Whether the user may switch; when not, `fixedBecause` says why. */
  canToggle: boolean;
  fixedBecause?: string;
}

export const PREVIEW_OFF =
  'This page reads the version 4 events tables: turn on the version 4 preview for your account first.';

export function readPathOf(settings: ModeSettings, userPrefersV4: boolean): ReadPathChoice {
  const b = behaviourOf(settings);
  if (!b.servesV4Reads) {
    return {
      path: 'v3',
      canToggle: false,
      fixedBecause:
        settings.release === '4' && settings.writeMode === 'dual'
          ? `the version 4 preview is off for this deployment (${ENV.allowPreviewOptIn}=false)`
          : `write mode ${settings.release === '4' ? settings.writeMode : 'legacy'} has only the version 3 read path`,
    };
  }
  if (!b.servesLegacyEndpoints) {
    return {
      path: 'v4',
      canToggle: false,
      fixedBecause: 'write mode events_only has only the version 4 read path',
    };
  }
  return { path: userPrefersV4 ? 'v4' : 'v3', canToggle: true };
}
