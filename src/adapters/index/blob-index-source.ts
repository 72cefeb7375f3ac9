import { ContentChanged, IndexMalformed } from '../../domain/errors.js';
import type { BlobStore, IndexSource, LoadedIndex } from '../../domain/ports.js';
import { parseIndexCsv } from './index-csv.js';

/** Indexes bigger than this are refused rather than read into memory. */
const defaultMaxIndexBytes = 16 * 1024 * 1024;

/** Client indexes stored as CSV files in the same blob store as the data. */
export class BlobIndexSource implements IndexSource {
  constructor(
    private readonly store: BlobStore,
    private readonly maxIndexBytes = defaultMaxIndexBytes,
  ) {}

  async version(path: string): Promise<string | undefined> {
    return (await this.store.getProperties(path))?.etag;
  }

  async load(path: string): Promise<LoadedIndex | undefined> {
    try {
      return await this.loadOnce(path);
    } catch (error) {
      // The index was replaced between reading its properties and its bytes: read the new one.
      if (error instanceof ContentChanged) return this.loadOnce(path);
      throw error;
    }
  }

  private async loadOnce(path: string): Promise<LoadedIndex | undefined> {
    const properties = await this.store.getProperties(path);
    if (properties === undefined) return undefined;
    if (properties.size > this.maxIndexBytes) {
      throw new IndexMalformed(`The index is ${properties.size} bytes, more than the ${this.maxIndexBytes} allowed`);
    }
    const chunks: Uint8Array[] = [];
    for await (const chunk of await this.store.read(path, { ifMatch: properties.etag })) chunks.push(chunk);
    const text = decodeUtf8(Buffer.concat(chunks));
    const { records, rejectedRows } = await parseIndexCsv(text);
    return { records, rejectedRows, version: properties.etag };
  }
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new IndexMalformed('The index is not valid UTF-8', { cause: error });
  }
}
