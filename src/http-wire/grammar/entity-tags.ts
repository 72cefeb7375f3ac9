import type { EntityTag, EntityTagCondition } from '../../domain/download-policy.js';
import { skipOptionalWhitespace, trimOptionalWhitespace } from './optional-whitespace.js';

/**
 * Entity tags (RFC 9110 section 8.8.3) and the `If-Match` / `If-None-Match` lists of them
 * (sections 13.1.1 and 13.1.2), scanned in one pass: time linear in the value's length, whatever
 * the client sends.
 *
 *   entity-tag = [ weak ] opaque-tag ; weak = %s"W/" (case-sensitive)
 *   opaque-tag = DQUOTE *etagc DQUOTE ; etagc = %x21 / %x23-7E / obs-text
 */

/** etagc: any visible character but `"`, or obs-text (%x80-FF). */
function isEtagCharacter(code: number): boolean {
  return code === 0x21 || (code >= 0x23 && code <= 0x7e) || (code >= 0x80 && code <= 0xff);
}

/** The entity tag starting at `from`, and the index after it; `undefined` when there is none. */
function scanEntityTag(value: string, from: number): { tag: EntityTag; end: number } | undefined {
  let index = from;
  const weak = value.startsWith('W/', index);
  if (weak) index += 2;
  if (value.charCodeAt(index) !== 0x22) return undefined;
  const openingQuote = index;
  index += 1;
  while (index < value.length && isEtagCharacter(value.charCodeAt(index))) index += 1;
  if (value.charCodeAt(index) !== 0x22) return undefined;
  index += 1;
  return { tag: { weak, opaque: value.slice(openingQuote, index) }, end: index };
}

/** One entity tag, surrounding whitespace allowed, or `undefined` when `value` is not exactly one. */
export function parseEntityTag(value: string): EntityTag | undefined {
  const start = skipOptionalWhitespace(value, 0);
  const scanned = scanEntityTag(value, start);
  if (scanned === undefined) return undefined;
  return skipOptionalWhitespace(value, scanned.end) === value.length ? scanned.tag : undefined;
}

/**
 * The value of `If-Match` or `If-None-Match`: `*`, a comma-separated list of entity tags (empty
 * elements allowed, section 5.6.1), or `malformed`. `undefined` when the value is blank, which
 * counts as an absent header. A tag may itself contain commas, so the list is scanned tag by tag
 * rather than split.
 */
export function parseEntityTagCondition(value: string): EntityTagCondition | undefined {
  const trimmed = trimOptionalWhitespace(value);
  if (trimmed === '') return undefined;
  if (trimmed === '*') return { kind: 'any' };
  const tags: EntityTag[] = [];
  let index = 0;
  for (;;) {
    // Skip the separators of empty list elements: OWS and commas.
    while (index < trimmed.length && (trimmed[index] === ',' || trimmed[index] === ' ' || trimmed[index] === '\t')) index += 1;
    if (index === trimmed.length) break;
    const scanned = scanEntityTag(trimmed, index);
    if (scanned === undefined) return { kind: 'malformed' };
    tags.push(scanned.tag);
    index = skipOptionalWhitespace(trimmed, scanned.end);
    if (index < trimmed.length && trimmed[index] !== ',') return { kind: 'malformed' };
  }
  // "1#entity-tag": a list of nothing but commas is not a list of tags.
  return tags.length === 0 ? { kind: 'malformed' } : { kind: 'tags', tags };
}
