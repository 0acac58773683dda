/** `observatory operator`: see operator/main.ts. */
import { operatorProcessConfig } from '../../operator/config.ts';
import { runOperator } from '../../operator/main.ts';

export const run = (_args: string[]): Promise<number> => runOperator(operatorProcessConfig());
