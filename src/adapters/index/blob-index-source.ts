import { ContentChanged, IndexMalformed } from '../../domain/errors.js';
import type { BlobContent, BlobStore, IndexRowSink, IndexSource, LoadedIndex } from '../../domain/ports.js';
import { streamIndexCsv } from './index-csv.js';

/** Client indexes stored as CSV files in the same blob store as the data, parsed as they stream in. */
export class BlobIndexSource implements IndexSource {
  /** @param maxIndexBytes Indexes bigger than this (INDEX_MAX_MB) are refused rather than read. */
  constructor(
    private readonly store: BlobStore,
    private readonly maxIndexBytes: number,
  ) {}

  async version(path: string): Promise<string | undefined> {
    return (await this.store.getProperties(path))?.etag;
  }

  async load<S extends IndexRowSink>(path: string, newSink: () => S): Promise<LoadedIndex<S> | undefined> {
    try {
      return await this.loadOnce(path, newSink());
    } catch (error) {
      // The index was replaced between reading its properties and its bytes: read the new one.
      if (error instanceof ContentChanged) return this.loadOnce(path, newSink());
      throw error;
    }
  }

  private async loadOnce<S extends IndexRowSink>(path: string, sink: S): Promise<LoadedIndex<S> | undefined> {
    const properties = await this.store.getProperties(path);
    if (properties === undefined) return undefined;
    if (properties.size > this.maxIndexBytes) {
      throw new IndexMalformed(`The index is ${properties.size} bytes, more than the ${this.maxIndexBytes} allowed (INDEX_MAX_MB)`);
    }
    await streamIndexCsv(decodeUtf8(await this.store.read(path, { ifMatch: properties.etag }), this.maxIndexBytes), sink);
    return { rows: sink, version: properties.etag };
  }
}

/**
 * Bytes decoded at once: a string of a million characters lands in V8's space for large objects,
 * fresh memory whose page faults held the event loop for tens of milliseconds per 1 MiB chunk the
 * store hands over; 64 KiB make strings of the young generation's reused pages.
 */
const decodeBytes = 64 * 1024;

/** The text of `content`, decoded as it arrives; a byte that is not UTF-8 fails, as does more than `maxBytes`. */
async function* decodeUtf8(content: BlobContent, maxBytes: number): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytes = 0;
  try {
    for await (const chunk of content) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) throw new IndexMalformed(`The index is more than the ${maxBytes} bytes allowed (INDEX_MAX_MB)`);
      for (let start = 0; start < chunk.byteLength; start += decodeBytes) yield decoder.decode(chunk.subarray(start, start + decodeBytes), { stream: true });
    }
    yield decoder.decode();
  } catch (error) {
    if (error instanceof TypeError) throw new IndexMalformed('The index is not valid UTF-8', { cause: error });
    throw error;
  }
}
