/**
 * The `keys` of a stored record after a PATCH: each the patch's value where it sent one, else the
 * stored value (a PATCH changes only the fields it sends).
 */
export const patchedFields = <T, K extends keyof T>(
  current: T,
  patch: { [P in K]?: T[P] | undefined },
  keys: readonly K[],
): Pick<T, K> => Object.fromEntries(keys.map((k) => [k, patch[k] ?? current[k]])) as Pick<T, K>;
