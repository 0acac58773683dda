/** The migration state machine: one step at a time (Release3 -> Legacy -> Dual -> EventsOnly). */
import type { MigrationState } from '../api/v1alpha1.ts';

export const isRelease4 = (s: MigrationState): boolean => s !== 'Release3';

/** The next state on the way from `from` to `desired`, never skipping Dual before EventsOnly. */
export function nextState(from: MigrationState, desired: MigrationState): MigrationState {
  if (from === desired || from === 'EventsOnly') return from;
  switch (from) {
    case 'Release3':
      return desired === 'Legacy' ? 'Legacy' : 'Dual';
    case 'Legacy':
      return desired === 'Release3' ? 'Release3' : 'Dual';
    case 'Dual':
      return desired;
  }
}
