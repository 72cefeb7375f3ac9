import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { packageRoot } from '../../src/app/package-root.js';

/** The documents a reader of the repository follows links through. */
export function guideFiles(): string[] {
  const root = packageRoot();
  const docs = join(root, 'docs');
  return [
    join(root, 'README.md'),
    join(root, 'SECURITY.md'),
    join(root, 'BENCHMARKS.md'),
    ...(existsSync(docs) ? readdirSync(docs).filter((name) => name.endsWith('.md')).map((name) => join(docs, name)) : []),
  ];
}

/** The lines of a markdown text outside fenced code blocks, with their 1-based line numbers. */
export function proseLines(markdown: string): Array<{ readonly line: number; readonly text: string }> {
  const lines: Array<{ line: number; text: string }> = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(text);
    if (fence === undefined && opening !== null) fence = opening[1];
    else if (fence !== undefined && text.trim().startsWith(fence)) fence = undefined;
    else if (fence === undefined) lines.push({ line: index + 1, text });
  });
  return lines;
}

/**
 * GitHub's anchor for a heading (github-slugger): lower case, punctuation but `-` and `_` dropped,
 * spaces to `-`; a repeated slug gets `-1`, `-2`, ...
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading === null) continue;
    const plain = (heading[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

export interface Link {
  readonly line: number;
  readonly target: string;
}

/** Inline (`[text](target)`) and reference (`[name]: target`) links outside code. */
export function linksIn(markdown: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const withoutCode = text.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line, target: match[1] ?? '' });
    const reference = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(withoutCode);
    if (reference !== null) links.push({ line, target: reference[1] ?? '' });
  }
  return links;
}

/**
 * The relative links of `file` (its text `markdown`) that lead nowhere: a file that does not exist,
 * or an `#anchor` no heading of the markdown file it points to has. Links with a scheme
 * (`https:`, `mailto:`) are not followed.
 */
export function brokenLinks(file: string, markdown: string, read: (path: string) => string = (path) => readFileSync(path, 'utf8')): string[] {
  const broken: string[] = [];
  for (const { line, target } of linksIn(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path = '', anchor] = target.split('#', 2);
    const destination = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    const where = `${relative(packageRoot(), file)}:${line}: ${target}`;
    if (!existsSync(destination)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (anchor === undefined || anchor === '' || !destination.endsWith('.md')) continue;
    const text = destination === file ? markdown : read(destination);
    if (!headingAnchors(text).has(anchor)) broken.push(`${where} (no heading with that anchor)`);
  }
  return broken;
}

/**
 * The text of the section under `heading` (e.g. `## Configuration`), up to the next heading of
 * that level or above; lines of code blocks (a `# comment` in a shell example) are not headings.
 */
export function sectionOf(markdown: string, heading: string): string {
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const prose = proseLines(markdown);
  const start = prose.find(({ text }) => text.trim() === heading);
  if (start === undefined) throw new Error(`no heading "${heading}"`);
  const next = prose.find(({ line, text }) => line > start.line && new RegExp(`^#{1,${level}}\\s`).test(text));
  return markdown.split('\n').slice(start.line - 1, next === undefined ? undefined : next.line - 1).join('\n');
}
