/**
 * Connection secrets at rest: AES-256-GCM under the server's key, stored as `iv:ciphertext:tag`
 * (hex, the reference's layout), and the masked form the API shows instead. Pure: no I/O.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export function encryptSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${iv.toString('hex')}:${data.toString('hex')}:${cipher.getAuthTag().toString('hex')}`;
}

/** Throws when the text was not encrypted under `key` or was altered. */
export function decryptSecret(key: Buffer, stored: string): string {
  const [iv, data, tag] = stored.split(':');
  if (iv === undefined || data === undefined || tag === undefined) throw new Error('not an encrypted secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'hex'));
  decipher.setAuthTag(Buffer.from(tag, 'hex'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'hex')), decipher.final()]).toString('utf8');
}

/** What the API shows of a secret: its last four characters, as the reference's `displaySecretKey`. */
export function maskSecret(secret: string): string {
  return `...${secret.length > 8 ? secret.slice(-4) : ''}`;
}
