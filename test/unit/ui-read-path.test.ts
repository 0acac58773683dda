import { describe, expect, it } from 'vitest';
import { RELEASE_3_SETTINGS, V4_DEFAULTS } from '../../server/contract/write-modes.ts';
import { readPathOf } from '../../server/features/users/read-path.ts';

const v4 = (over: Partial<typeof V4_DEFAULTS>) => ({ release: '4' as const, ...V4_DEFAULTS, ...over });

// The spec: in dual with the preview opt-in true each user toggles; with it false only version 3;
// events_only only version 4; legacy and release 3 only version 3.
describe('readPathOf', () => {
  it.each([
    ['release 3', { release: '3' as const, ...RELEASE_3_SETTINGS }, false, 'v3', false],
    ['release 3, user asked for v4', { release: '3' as const, ...RELEASE_3_SETTINGS }, true, 'v3', false],
    ['legacy', v4({ writeMode: 'legacy', allowPreviewOptIn: true }), true, 'v3', false],
    ['dual, opt-in false', v4({ writeMode: 'dual', allowPreviewOptIn: false }), true, 'v3', false],
    ['dual, opt-in true, user off', v4({ writeMode: 'dual', allowPreviewOptIn: true }), false, 'v3', true],
    ['dual, opt-in true, user on', v4({ writeMode: 'dual', allowPreviewOptIn: true }), true, 'v4', true],
    ['events_only, user off', v4({ writeMode: 'events_only' }), false, 'v4', false],
    ['events_only, user on', v4({ writeMode: 'events_only' }), true, 'v4', false],
  ])('%s', (_, settings, prefers, path, canToggle) => {
    const choice = readPathOf(settings, prefers);
    expect({ path: choice.path, canToggle: choice.canToggle }).toEqual({ path, canToggle });
    expect(choice.fixedBecause === undefined).toBe(canToggle);
  });

  it('names the variable when dual keeps the preview off', () => {
    expect(readPathOf(v4({ writeMode: 'dual', allowPreviewOptIn: false }), true).fixedBecause).toContain(
      'SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN=false',
    );
  });
});
