import type { Readable } from 'node:stream';
import type { BlobContent } from '../domain/ports.js';

const flowingSource = Symbol('flowingSource');

/** The Node stream behind a blob's content, for a consumer that can take it in flowing mode. */
export interface FlowingSource {
  readonly stream: Readable;
  /** What a failure of the stream means to the gateway (e.g. a reset as a retryable storage failure). */
  readonly translate: (error: unknown) => Error;
}

/**
 * A blob's content over a Node stream: an async iterable (the port's shape, for any consumer) whose
 * failures are translated, that also hands its stream to a consumer able to take it in flowing
 * mode (`flowingSourceOf`). Flowing mode moves each chunk from the socket to its consumer with no
 * buffering in between; an async iterator reads in paused mode, where every chunk over the
 * stream's high-water mark pauses and resumes the storage socket, at a cost in CPU per byte.
 *
 * Returning early from the iteration destroys the stream, even before the first chunk, so its
 * connection is released.
 */
export function flowingContent(stream: Readable, translate: (error: unknown) => Error): BlobContent {
  const source: FlowingSource = { stream, translate };
  return {
    [flowingSource]: source,
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      // No encoding is set on the stream, so every chunk is a Buffer.
      const chunks: AsyncIterator<Buffer> = stream[Symbol.asyncIterator]();
      return {
        next: async () => {
          try {
            return await chunks.next();
          } catch (error) {
            throw translate(error);
          }
        },
        return: async () => {
          stream.destroy();
          await chunks.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  } as BlobContent;
}

/** The stream behind `content`, when it has one to hand over. */
export function flowingSourceOf(content: BlobContent): FlowingSource | undefined {
  return (content as { [flowingSource]?: FlowingSource })[flowingSource];
}
