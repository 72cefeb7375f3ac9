import { expect } from 'chai';
import { InvalidPath } from '../../src/domain/errors.js';
import { MAX_SEGMENT_LENGTH } from '../../src/domain/storage-path.js';

/** Tables of request paths shared by the domain's path rule and the HTTP edge's decoding tests. */

/** A path of exactly 1024 characters (Azure's limit): five 204-character segments. */
export const LONGEST_PATH = Array.from({ length: 5 }, () => 'a'.repeat(204)).join('/');

export function expectInvalidPath(action: () => unknown): InvalidPath {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).to.be.instanceOf(InvalidPath);
  const error = caught as InvalidPath;
  expect(error.code).to.equal('invalid_path');
  expect(error.message).to.be.a('string').and.not.equal('');
  return error;
}

/** Request paths as they arrive after the route's `/`, still percent-encoded. */
export const HOSTILE_REQUEST_PATHS: [string, string][] = [
  ['an empty path', ''],
  ['a parent segment', '..'],
  ['a climb to /etc/passwd', '../etc/passwd'],
  ['a climb past the root from a subfolder', 'a/../../b'],
  ['a trailing parent segment', 'a/..'],
  ['encoded dots', '%2e%2e/x'],
  ['encoded dots and slash', '%2E%2E%2Fx'],
  ['an encoded slash after dots', '..%2fx'],
  ['an encoded slash', 'a%2fb'],
  ['an upper-case encoded slash', 'a%2Fb'],
  ['an encoded backslash', 'a%5cb'],
  ['an upper-case encoded backslash', 'a%5Cb'],
  ['a backslash', 'a\\b'],
  ['backslash climbs', '..\\..\\x'],
  ['encoded backslashes around dots', '%5c..%5c'],
  ['an encoded NUL', '%00'],
  ['an encoded NUL before an extension', 'a%00.csv'],
  ['a raw NUL', 'a\u0000b'],
  ['an empty segment', 'a//b'],
  ['a leading slash', '/a'],
  ['two leading slashes', '//a'],
  ['a trailing slash', 'a/'],
  ['a current segment', '.'],
  ['a leading current segment', './a'],
  ['a middle current segment', 'a/./b'],
  ['an encoded current segment', 'a/%2e/b'],
  ['an encoded parent segment', 'a/%2E%2E/b'],
  ['a segment of three dots', '...'],
  ['a middle segment of three dots', 'a/.../b'],
  ['four dots and an empty segment', '....//'],
  ['a parent segment with a trailing space', 'a/..%20/b'],
  ['a parent segment with a leading space', '%20../b'],
  ['a segment of spaces', 'a/%20%20/b'],
  ['double-encoded dots', '%252e%252e'],
  ['double-encoded slash', 'a%252fb'],
  ['an encoded percent sign', '%25'],
  ['a double-encoded NUL', 'a%2500b'],
  ['a lone percent sign', '%'],
  ['a truncated escape', '%e'],
  ['a non-hex escape', '%zz'],
  ['an overlong UTF-8 dot', '%c0%ae'],
  ['an overlong UTF-8 slash', '%c0%af'],
  ['an encoded UTF-16 surrogate', '%ed%a0%80'],
  ['an invalid UTF-8 byte', 'a%ff'],
  ['a truncated UTF-8 sequence', 'relat%C3rio.csv'],
  ['an encoded replacement character', 'a%ef%bf%bd'],
  ['an encoded line feed', 'a%0ab'],
  ['an encoded carriage return', 'a%0db'],
  ['an encoded tab', 'a%09b'],
  ['an encoded DEL', 'a%7fb'],
  ['an encoded escape sequence', '%1b[31mred'],
  ['an encoded C1 control (NEL)', 'a%c2%85b'],
  ['a path one character too long', `${LONGEST_PATH}a`],
  ['a segment one character too long', `x/${'a'.repeat(MAX_SEGMENT_LENGTH + 1)}`],
];

/** Request paths that are safe, and the storage path each decodes to. */
export const GOOD_REQUEST_PATHS: [string, string][] = [
  ['b3/cotahist/COTAHIST_A2024.parquet', 'b3/cotahist/COTAHIST_A2024.parquet'],
  ['derivatives/options/greeks%202024.parquet', 'derivatives/options/greeks 2024.parquet'],
  ['funds/relat%C3%B3rio.csv', 'funds/relatório.csv'],
  ['funds/relatório.csv', 'funds/relatório.csv'],
  ['funds/cvm/inf%20diario.csv', 'funds/cvm/inf diario.csv'],
  ['a/b.c/d', 'a/b.c/d'],
  ['...hidden', '...hidden'],
  ['.hidden/file', '.hidden/file'],
  ['a..b/c', 'a..b/c'],
  ["a+b=c,d'e.csv", "a+b=c,d'e.csv"],
  ['a%2Bb%3Dc%2Cd%27e.csv', "a+b=c,d'e.csv"],
  ['%F0%9F%93%88/chart.csv', '📈/chart.csv'],
  ['%EF%BC%8E%EF%BC%8E/x', '．．/x'],
  ['%E2%80%A4%E2%80%A4/x', '\u2024\u2024/x'],
  [LONGEST_PATH, LONGEST_PATH],
  [`x/${'a'.repeat(MAX_SEGMENT_LENGTH)}`, `x/${'a'.repeat(MAX_SEGMENT_LENGTH)}`],
];

