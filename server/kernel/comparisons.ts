/** Two numbers compared by an operator's symbol, for the rules that name one (alert thresholds, pricing tiers). */
export const COMPARE = {
  '>': (a: number, b: number) => a > b,
  '>=': (a: number, b: number) => a >= b,
  '<': (a: number, b: number) => a < b,
  '<=': (a: number, b: number) => a <= b,
  '=': (a: number, b: number) => a === b,
  '!=': (a: number, b: number) => a !== b,
} as const;
export type Comparison = keyof typeof COMPARE;
