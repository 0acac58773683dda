import { readFileSync } from 'node:fs';

/** CPU time (user + system) a process has used, in seconds (Linux clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
