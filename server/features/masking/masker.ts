/**
 * A project's masking rules compiled into one masker: texts, JSON values and stored JSON texts
 * come back with every match replaced. Built-in detectors run as one JavaScript pattern
 * (detectors.ts); custom patterns run on RE2 (re2js), whose time is linear in the text whatever
 * the pattern, so a user's pattern cannot stall ingestion.
 */
import { RE2JS } from 're2js';
import { compilePattern, PatternError } from '../models/patterns.ts';
import { DETECTOR_SPECS, type Detector } from './detectors.ts';

/** A rule as the masker needs it: a built-in detector or a custom RE2 pattern, and its replacement. */
export interface MaskingRuleSpec {
  detector: Detector | 'custom';
  /** The RE2 pattern of a custom rule. */
  pattern?: string | null | undefined;
  /** Replaces each match; absent: the detector's own (`[REDACTED ...]`), or `[REDACTED]`. */
  replacement?: string | null | undefined;
}

export interface Masker {
  /** The text with every match replaced (the same string when nothing matched). */
  text(s: string): string;
  /** A JSON value whose strings are masked; keys and structure are kept. */
  value<T>(v: T): T;
  /** A stored text: JSON (its strings masked, still valid JSON) or plain text. */
  jsonText(s: string): string;
}

export const CUSTOM_REPLACEMENT = '[REDACTED]';

/** Compiles a custom rule's pattern; throws a PatternError saying why it is refused. */
export function compileCustom(pattern: string): RE2JS {
  const compiled = compilePattern(pattern);
  if (compiled.test('')) throw new PatternError('matches the empty text');
  return compiled as RE2JS;
}

interface Builtin {
  spec: (typeof DETECTOR_SPECS)[Detector];
  replacement: string;
}

const unescaped = (s: string) =>
  s.replace(/\\u([0-9a-fA-F]{4})|\\./g, (_m, hex: string | undefined) =>
    hex ? String.fromCharCode(Number.parseInt(hex, 16)) : ' ',
  );

export function compileMasker(rules: readonly MaskingRuleSpec[]): Masker | undefined {
  const builtins: Builtin[] = [];
  const customs: { re: RE2JS; replacement: string }[] = [];
  for (const r of rules) {
    if (r.detector === 'custom') {
      if (!r.pattern) continue;
      customs.push({
        re: compileCustom(r.pattern),
        replacement: RE2JS.quoteReplacement(r.replacement ?? CUSTOM_REPLACEMENT),
      });
    } else {
      const spec = DETECTOR_SPECS[r.detector];
      builtins.push({ spec, replacement: r.replacement ?? spec.replacement });
    }
  }
  if (builtins.length === 0 && customs.length === 0) return undefined;
  // One scan answers "does any built-in match?", which is what almost every text asks; a detector
  // with a required text joins only texts that have it.
  const each = builtins.map((b) => ({
    ...b,
    re: new RegExp(b.spec.source, 'g'),
    once: new RegExp(b.spec.source),
  }));
  const ungated = each.filter((b) => !b.spec.requires);
  const gated = each.filter((b) => b.spec.requires);
  const anyUngated = ungated.length ? new RegExp(ungated.map((b) => `(?:${b.spec.source})`).join('|')) : null;
  const applies = (b: (typeof each)[number], s: string) => !b.spec.requires || s.includes(b.spec.requires);
  const anyBuiltin = (s: string) =>
    Boolean(anyUngated?.test(s)) || gated.some((b) => s.includes(b.spec.requires!) && b.once.test(s));

  const text = (s: string): string => {
    let out = s;
    if (anyBuiltin(out)) {
      for (const b of each) {
        if (!applies(b, out)) continue;
        out = out.replace(b.re, (m) => (b.spec.check && !b.spec.check(m) ? m : b.replacement));
      }
    }
    for (const c of customs) {
      const m = c.re.matcher(out);
      if (m.find()) out = m.reset().replaceAll(c.replacement);
    }
    return out;
  };

  const value = <T>(v: T): T => {
    if (typeof v === 'string') return text(v) as T;
    if (Array.isArray(v)) return v.map(value) as T;
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = value(x);
      return out as T;
    }
    return v;
  };

  const jsonText = (s: string): string => {
    // A JSON text holds its strings as they are, between characters no built-in matches (quotes,
    // brackets, commas), once each escape is read as the character it stands for (a space for the
    // whitespace ones, which no built-in treats differently from a space): a built-in that finds
    // nothing in that finds nothing in any of the strings. Custom patterns may match the
    // punctuation, so they always see the parsed strings.
    if (customs.length === 0 && !anyBuiltin(s.includes('\\') ? unescaped(s) : s)) return s;
    let parsed: unknown;
    try {
      parsed = JSON.parse(s);
    } catch {
      return text(s);
    }
    return JSON.stringify(value(parsed));
  };

  return { text, value, jsonText };
}
