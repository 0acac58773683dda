/**
 * Load shedding: past a bound on concurrent writes the server answers 429 with Retry-After
 * instead of queueing without limit, so accepted data is never dropped and clients back off.
 */
import type { FastifyInstance } from 'fastify';
import type { BacklogGate } from '../../../features/ingestion/log/log.ts';
import { TooManyRequests } from '../../../kernel/errors.ts';

export function limitConcurrentWrites(app: FastifyInstance, maxInFlight: number): void {
  let inFlight = 0;
  app.addHook('onRequest', async (_req, reply) => {
    if (inFlight >= maxInFlight) throw new TooManyRequests('Too many concurrent writes; retry shortly', 1);
    inFlight++;
    reply.raw.once('close', () => {
      inFlight--;
    });
  });
}

/**
 * Past the ingestion log's backlog bounds (a store down for long, drains that cannot keep up) the
 * writes answer 429 with Retry-After instead of growing the log without limit; the SDKs retry.
 */
export function limitBacklog(app: FastifyInstance, gate: BacklogGate): void {
  app.addHook('onRequest', async () => {
    const refusal = await gate.refusal();
    if (refusal) throw new TooManyRequests(refusal.message, refusal.retryAfterSeconds);
  });
}
