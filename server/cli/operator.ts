/** `observatory operator`: see operator/main.ts. */
import { runOperator } from '../../operator/main.ts';

export const run = (_args: string[]): Promise<number> => runOperator(process.env);
