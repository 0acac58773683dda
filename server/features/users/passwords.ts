/**
 * Password hashing with a memory-hard function: Argon2id through Node's built-in `crypto.argon2`
 * (Node >= 24.7), scrypt where an older Node lacks it. Hashes are PHC strings
 * (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`, `$scrypt$ln=...,r=...,p=...$salt$hash`), so a
 * stored hash names its own function and parameters and either kind verifies on any process.
 */
import * as crypto from 'node:crypto';
import { promisify } from 'node:util';

/** OWASP's Argon2id configuration (19 MiB, 2 passes, 1 lane): memory-hard, a few hundred ms. */
const ARGON2 = { memory: 19_456, passes: 2, parallelism: 1, tagLength: 32 } as const;
/** scrypt N=2^17, r=8, p=1 (128 MiB), OWASP's scrypt configuration. */
const SCRYPT = { ln: 17, r: 8, p: 1, keylen: 32 } as const;

type Argon2 = (
  algorithm: 'argon2id',
  params: {
    message: string;
    nonce: Buffer;
    memory: number;
    passes: number;
    parallelism: number;
    tagLength: number;
  },
  cb: (err: Error | null, key: Buffer) => void,
) => void;
const argon2 = (crypto as unknown as { argon2?: Argon2 }).argon2;
const argon2Async = argon2 ? promisify(argon2) : undefined;
const scryptAsync = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
const unb64 = (s: string) => Buffer.from(s, 'base64');

async function deriveArgon2(password: string, salt: Buffer, m: number, t: number, p: number, len: number) {
  if (!argon2Async) throw new Error('this Node has no crypto.argon2: an Argon2id hash cannot be verified');
  return argon2Async('argon2id', {
    message: password,
    nonce: salt,
    memory: m,
    passes: t,
    parallelism: p,
    tagLength: len,
  });
}

function deriveScrypt(password: string, salt: Buffer, ln: number, r: number, p: number, len: number) {
  const N = 2 ** ln;
  return scryptAsync(password, salt, len, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  if (argon2Async) {
    const { memory: m, passes: t, parallelism: p, tagLength } = ARGON2;
    const key = await deriveArgon2(password, salt, m, t, p, tagLength);
    return `$argon2id$v=19$m=${m},t=${t},p=${p}$${b64(salt)}$${b64(key)}`;
  }
  const { ln, r, p, keylen } = SCRYPT;
  const key = await deriveScrypt(password, salt, ln, r, p, keylen);
  return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
}

/** The numeric parameters of a PHC parameter list (`m=1,t=2,p=3`). */
function phcParams(text: string): Record<string, number> {
  return Object.fromEntries(
    text.split(',').map((kv) => {
      const [k, v] = kv.split('=');
      return [k ?? '', Number(v)];
    }),
  );
}

/** Whether `password` matches `stored`; false for a malformed or unknown hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  let expected: Buffer;
  let actual: Buffer;
  if (parts[1] === 'argon2id' && parts.length === 6) {
    const { m, t, p } = phcParams(parts[3]!);
    expected = unb64(parts[5]!);
    actual = await deriveArgon2(password, unb64(parts[4]!), m!, t!, p!, expected.length);
  } else if (parts[1] === 'scrypt' && parts.length === 5) {
    const { ln, r, p } = phcParams(parts[2]!);
    expected = unb64(parts[4]!);
    actual = await deriveScrypt(password, unb64(parts[3]!), ln!, r!, p!, expected.length);
  } else {
    return false;
  }
  return expected.length > 0 && crypto.timingSafeEqual(actual, expected);
}

let decoy: Promise<string> | undefined;
/** A hash of a random password: checked when an email is unknown so both paths cost the same. */
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  return decoy;
}
