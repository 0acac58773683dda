/**
 * Load shedding: past a bound on concurrent writes the server answers 429 with Retry-After
 * instead of queueing without limit, so accepted data is never dropped and clients back off.
 */
import type { FastifyInstance } from 'fastify';

export function limitConcurrentWrites(app: FastifyInstance, maxInFlight: number): void {
  let inFlight = 0;
  app.addHook('onRequest', async (_req, reply) => {
    if (inFlight >= maxInFlight) {
      return reply
        .code(429)
        .header('retry-after', '1')
        .send({ message: 'Too many concurrent writes; retry shortly' });
    }
    inFlight++;
    reply.raw.once('close', () => {
      inFlight--;
    });
  });
}
