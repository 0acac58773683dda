/**
 * The built-in detectors of private data. Each is a JavaScript pattern written here (bounded
 * quantifiers, no nested repetition, so none backtracks badly on any input) with an optional check
 * of what it found: card numbers pass Luhn, IBANs pass ISO 13616's mod 97, so long ids and
 * timestamps are left alone. User patterns never run as JavaScript regexes: they are RE2 (rules.ts).
 */

export const DETECTORS = ['email', 'card_number', 'api_key', 'iban', 'phone_number'] as const;
export type Detector = (typeof DETECTORS)[number];

export interface DetectorSpec {
  /** The pattern's source, without flags (case-sensitive; ranges say which cases match). */
  source: string;
  /**
   * A text every match contains: a text without it is not scanned. The email pattern tries a
   * local part at every position, ten times the cost of all the others together.
   */
  requires?: string;
  /** Whether a match is really one (checksums); without it every match is. */
  check?: (match: string) => boolean;
  /** What replaces a match unless the rule says otherwise. */
  replacement: string;
}

const digits = (s: string) => s.replace(/\D/g, '');

/** Luhn's checksum, as every card number carries it. */
export function luhnValid(number: string): boolean {
  const d = digits(number);
  if (d.length < 13 || d.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < d.length; i++) {
    let n = d.charCodeAt(d.length - 1 - i) - 48;
    if (i % 2 === 1) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
  }
  return sum % 10 === 0;
}

/** ISO 13616: the IBAN moved by four characters, letters as 10-35, is 1 modulo 97. */
export function ibanValid(iban: string): boolean {
  const s = iban.replace(/ /g, '').toUpperCase();
  if (s.length < 15 || s.length > 34) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const v = ch >= 'A' && ch <= 'Z' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    if (v < 0 || v > 35) return false;
    rest = v > 9 ? (rest * 100 + v) % 97 : (rest * 10 + v) % 97;
  }
  return rest === 1;
}

export const DETECTOR_SPECS: Record<Detector, DetectorSpec> = {
  email: {
    requires: '@',
    source: String.raw`[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b`,
    replacement: '[REDACTED EMAIL]',
  },
  card_number: {
    source: String.raw`\b\d(?:[ -]?\d){12,18}\b`,
    check: luhnValid,
    replacement: '[REDACTED CARD NUMBER]',
  },
  // Secret keys by their issuers' documented prefixes, JSON Web Tokens, and bearer credentials.
  api_key: {
    source: [
      String.raw`\b(?:sk|pk)-lf-[A-Za-z0-9-]{8,64}`,
      String.raw`\bsk-(?:proj-|ant-|or-)?[A-Za-z0-9_-]{20,200}`,
      String.raw`\bAKIA[0-9A-Z]{16}\b`,
      String.raw`\bAIza[0-9A-Za-z_-]{35}`,
      String.raw`\bgh[pousr]_[A-Za-z0-9]{36,255}`,
      String.raw`\bgithub_pat_[A-Za-z0-9_]{22,255}`,
      String.raw`\bxox[abprs]-[A-Za-z0-9-]{10,200}`,
      String.raw`\beyJ[A-Za-z0-9_-]{8,2000}\.[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,2000}`,
      String.raw`\bBearer [A-Za-z0-9._~+/-]{16,2000}=*`,
    ].join('|'),
    replacement: '[REDACTED SECRET]',
  },
  iban: {
    // Written whole, or in groups of four as printed; upper case, as ISO 13616 writes it.
    source: String.raw`\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)\b`,
    check: ibanValid,
    replacement: '[REDACTED IBAN]',
  },
  // International numbers (+ and 7-15 digits, E.164) and national ones written with separators.
  phone_number: {
    source: [
      String.raw`\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}\d`,
      String.raw`\(\d{2,4}\) ?\d{3,4}[ .-]\d{3,4}\b`,
      String.raw`\b\d{3}[.-]\d{3}[.-]\d{4}\b`,
    ].join('|'),
    check: (m) => {
      const n = digits(m).length;
      return n >= 7 && n <= 15;
    },
    replacement: '[REDACTED PHONE NUMBER]',
  },
};
