/** The ports the service's roles listen on by default (`PORT` overrides). */
export const PORTS = { web: 3000, worker: 3030 } as const;
export type Role = keyof typeof PORTS;
