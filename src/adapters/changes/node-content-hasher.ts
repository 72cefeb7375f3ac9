import { createHash } from 'node:crypto';
import type { BlobContent, ContentHasher } from '../../domain/ports.js';

/** SHA-256 with Node's crypto, chunk by chunk as the content streams. */
export class NodeContentHasher implements ContentHasher {
  async sha256(content: BlobContent): Promise<string> {
    const hash = createHash('sha256');
    for await (const chunk of content) hash.update(chunk);
    return hash.digest('hex');
  }
}
