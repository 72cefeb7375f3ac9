import { XMLBuilder } from 'fast-xml-parser';

/** The namespace of every S3 response body (`http://s3.amazonaws.com/doc/2006-03-01/`). */
export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: false, suppressEmptyNode: false });

/** A value of an XML body: text, a nested element, or a list of repeated elements. */
export type XmlValue = string | number | boolean | XmlElement | readonly XmlElement[] | readonly string[];
export interface XmlElement {
  readonly [name: string]: XmlValue | undefined;
}

/**
 * An S3 response body: the XML declaration and one root element. Text is escaped by
 * fast-xml-parser; elements whose value is `undefined` are left out.
 */
export function s3Xml(root: string, content: XmlElement, namespaced = true): string {
  const element = namespaced ? { '@_xmlns': S3_NAMESPACE, ...withoutUndefined(content) } : withoutUndefined(content);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ [root]: element }) as string}`;
}

function withoutUndefined(content: XmlElement): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(content)) {
    if (value === undefined) continue;
    kept[name] = Array.isArray(value)
      ? value.map((item: unknown) => (typeof item === 'object' && item !== null ? withoutUndefined(item as XmlElement) : item))
      : typeof value === 'object'
        ? withoutUndefined(value as XmlElement)
        : value;
  }
  return kept;
}
