/**
 * A gzipped ustar archive of text files (pure): what `report -o FILE.tar.gz` writes, readable by
 * `tar -xzf` anywhere. Regular files only, under one top directory; a path over the 100 bytes of
 * ustar's name field is split at a slash into its 155-byte prefix field.
 */
import { gzipSync } from 'node:zlib';

const BLOCK = 512;

function split(path: string): { prefix: Buffer; name: Buffer } {
  const whole = Buffer.from(path, 'utf8');
  if (whole.length <= 100) return { prefix: Buffer.alloc(0), name: whole };
  for (let i = path.indexOf('/'); i > 0; i = path.indexOf('/', i + 1)) {
    const prefix = Buffer.from(path.slice(0, i), 'utf8');
    const name = Buffer.from(path.slice(i + 1), 'utf8');
    if (prefix.length <= 155 && name.length <= 100) return { prefix, name };
  }
  throw new RangeError(`path ${path} is longer than a tar header holds`);
}

function header(path: string, size: number, mtime: number): Buffer {
  const { prefix, name } = split(path);
  const h = Buffer.alloc(BLOCK);
  prefix.copy(h, 345);
  const put = (s: string, offset: number) => h.write(s, offset, 'ascii');
  const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, '0');
  name.copy(h, 0);
  put(octal(0o644, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(size, 12), 124);
  put(octal(Math.floor(mtime / 1000), 12), 136);
  put(' '.repeat(8), 148);
  put('0', 156);
  put('ustar\u000000', 257);
  const sum = h.reduce((a, b) => a + b, 0);
  put(`${octal(sum, 7)}\u0000`, 148);
  return h;
}

export function tarGz(
  files: readonly { path: string; content: string }[],
  top: string,
  mtime: number,
): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    const body = Buffer.from(f.content, 'utf8');
    parts.push(header(`${top}/${f.path}`, body.length, mtime), body);
    const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return gzipSync(Buffer.concat(parts));
}
