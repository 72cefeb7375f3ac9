import { expect } from 'chai';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * The S3 API's response shapes, as the API reference defines them
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/): each element's children, which are
 * required, which may repeat, and the type of each leaf. A body is checked against its shape
 * strictly: no unknown element, every required one, the right type and the S3 namespace.
 */
type Leaf = 'string' | 'int' | 'bool' | 'timestamp' | 'etag';
interface Child {
  readonly type: Leaf | Shape;
  readonly required?: boolean;
  readonly repeated?: boolean;
}
interface Shape {
  readonly [name: string]: Child;
}

const owner: Shape = { ID: { type: 'string' }, DisplayName: { type: 'string' } };
const object: Shape = {
  Key: { type: 'string', required: true },
  LastModified: { type: 'timestamp', required: true },
  ETag: { type: 'etag', required: true },
  Size: { type: 'int', required: true },
  StorageClass: { type: 'string' },
  Owner: { type: owner },
  ChecksumAlgorithm: { type: 'string', repeated: true },
};
const commonPrefix: Shape = { Prefix: { type: 'string', required: true } };
const listCommon: Shape = {
  Name: { type: 'string', required: true },
  Prefix: { type: 'string', required: true },
  Delimiter: { type: 'string' },
  MaxKeys: { type: 'int', required: true },
  EncodingType: { type: 'string' },
  IsTruncated: { type: 'bool', required: true },
  Contents: { type: object, repeated: true },
  CommonPrefixes: { type: commonPrefix, repeated: true },
};

const shapes: Readonly<Record<string, { readonly shape: Shape | Leaf; readonly namespaced: boolean; readonly alternatives?: readonly Shape[] }>> = {
  ListAllMyBucketsResult: {
    namespaced: true,
    shape: {
      Owner: { type: owner },
      Buckets: { type: { Bucket: { type: { Name: { type: 'string', required: true }, CreationDate: { type: 'timestamp', required: true } }, repeated: true } }, required: true },
    },
  },
  ListBucketResult: {
    namespaced: true,
    shape: {},
    alternatives: [
      // ListObjectsV2
      { ...listCommon, KeyCount: { type: 'int', required: true }, ContinuationToken: { type: 'string' }, NextContinuationToken: { type: 'string' }, StartAfter: { type: 'string' } },
      // ListObjects (v1)
      { ...listCommon, Marker: { type: 'string', required: true }, NextMarker: { type: 'string' } },
    ],
  },
  LocationConstraint: { namespaced: true, shape: 'string' },
  Error: {
    namespaced: false,
    shape: {
      Code: { type: 'string', required: true },
      Message: { type: 'string', required: true },
      Resource: { type: 'string' },
      RequestId: { type: 'string', required: true },
      Key: { type: 'string' },
      BucketName: { type: 'string' },
    },
  },
};

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false, isArray: (_name, _path, _leaf, isAttribute) => !isAttribute, textNodeName: '#text' });

/** Checks an S3 response body against the shape of its root element. */
export function expectS3Shape(root: keyof typeof shapes, body: string): void {
  expect(XMLValidator.validate(body), 'well-formed XML').to.equal(true);
  expect(body.startsWith('<?xml version="1.0" encoding="UTF-8"?>'), 'XML declaration').to.equal(true);
  const document = parser.parse(body) as Record<string, unknown[]>;
  const roots = Object.keys(document).filter((name) => name !== '?xml');
  expect(roots).to.deep.equal([root]);
  const element = (document[root] as unknown[])[0];
  const spec = shapes[root]!;
  if (spec.namespaced) expect((element as Record<string, unknown>)['@_xmlns'], `${root} namespace`).to.equal('http://s3.amazonaws.com/doc/2006-03-01/');
  if (spec.alternatives !== undefined) {
    const problems = spec.alternatives.map((shape) => problemsOf(element, shape, root));
    expect(problems.some((found) => found.length === 0), `${root} matches one of its shapes: ${JSON.stringify(problems)}`).to.equal(true);
    return;
  }
  expect(problemsOf(element, spec.shape, root)).to.deep.equal([]);
}

function problemsOf(value: unknown, shape: Shape | Leaf, where: string): string[] {
  if (typeof shape === 'string') return leafProblems(value, shape, where);
  if (typeof value !== 'object' || value === null) return value === '' && Object.values(shape).every((child) => child.required !== true) ? [] : [`${where} must be an element`];
  const problems: string[] = [];
  const children = value as Record<string, unknown[]>;
  for (const name of Object.keys(children)) {
    if (name.startsWith('@_')) continue;
    const child = shape[name];
    if (child === undefined) {
      problems.push(`${where}.${name} is not in the shape`);
      continue;
    }
    const occurrences = children[name] ?? [];
    if (child.repeated !== true && occurrences.length > 1) problems.push(`${where}.${name} must not repeat`);
    occurrences.forEach((occurrence) => problems.push(...problemsOf(occurrence, child.type, `${where}.${name}`)));
  }
  for (const [name, child] of Object.entries(shape)) {
    if (child.required === true && children[name] === undefined) problems.push(`${where}.${name} is required`);
  }
  return problems;
}

function leafProblems(value: unknown, type: Leaf, where: string): string[] {
  const text = typeof value === 'string' ? value : typeof value === 'object' && value !== null && Object.keys(value).every((key) => key.startsWith('@_')) ? '' : undefined;
  if (text === undefined) return [`${where} must be text`];
  const ok =
    type === 'string' ||
    (type === 'int' && /^\d+$/.test(text)) ||
    (type === 'bool' && /^(true|false)$/.test(text)) ||
    (type === 'timestamp' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/.test(text)) ||
    (type === 'etag' && /^"[^"]*"$/.test(text.replace(/&quot;/g, '"')));
  return ok ? [] : [`${where} "${text}" is not a ${type}`];
}
