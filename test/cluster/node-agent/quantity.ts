// Just enough of Kubernetes resource quantities for resourceFieldRef env values.
const suffixes: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
};

export function parseQuantity(value: string): number {
  const match = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(value.trim());
  const scale = match ? suffixes[match[2] ?? ''] : undefined;
  if (!match || scale === undefined) throw new Error(`invalid quantity ${JSON.stringify(value)}`);
  return Number(match[1]) * scale;
}
