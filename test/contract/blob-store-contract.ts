import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { ContentChanged, InvalidPath, FileNotFound } from '../../src/domain/errors.js';
import type { BlobContent, BlobProperties, BlobStore, BlobSummary } from '../../src/domain/ports.js';
import { rejectionOf } from '../support/rejection.js';

/** The HTTP headers and metadata a fixture may set on a blob, where its storage can keep them. */
export type BlobFixtureProperties = Partial<
  Pick<
    BlobProperties,
    'contentType' | 'contentDisposition' | 'contentEncoding' | 'contentLanguage' | 'cacheControl' | 'metadata'
  >
>;

/** One adapter, empty, plus the means to arrange its storage behind its back. */
export interface BlobStoreFixture {
  readonly store: BlobStore;
  /** Writes a blob; a fixture whose storage cannot keep `props` ignores them. */
  put(path: string, bytes: Uint8Array | string, props?: BlobFixtureProperties): Promise<void>;
  remove(path: string): Promise<void>;
  cleanup(): Promise<void>;
  readonly capabilities: {
    /** Storage keeps content type, disposition, ... and metadata set by `put`. */
    readonly httpMetadata: boolean;
    /** Storage has symlinks; these plant one at `linkPath` pointing outside the store's root. */
    readonly symlinks?: {
      toFileOutsideRoot(linkPath: string): Promise<void>;
      toFolderOutsideRoot(linkPath: string): Promise<void>;
      toFileInsideRoot(linkPath: string, targetPath: string): Promise<void>;
    };
  };
}

const HOSTILE_PATHS: readonly string[] = [
  '../x',
  'a/../../x',
  'a/./b',
  'a//b',
  '/abs',
  'a/',
  '',
  'a\\b',
  'a\u0000b',
  'a\u001fb',
  'x'.repeat(2000),
];

/**
 * The behaviour every `BlobStore` adapter shares. Each test gets a fresh, empty store from `setup`.
 */
export function describeBlobStoreContract(name: string, setup: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let fixture: BlobStoreFixture;
    let store: BlobStore;

    beforeEach(async () => {
      fixture = await setup();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('getProperties', () => {
      it('returns the size, a quoted strong etag and a recent lastModified of an existing blob', async () => {
        await fixture.put('funds/a.csv', 'a,b\n1,2\n');

        const properties = await store.getProperties('funds/a.csv');

        expect(properties?.path).to.equal('funds/a.csv');
        expect(properties?.size).to.equal(8);
        expect(properties?.etag).to.match(/^"[^"]+"$/);
        expect(properties?.lastModified).to.be.instanceOf(Date);
        expect(Math.abs(Date.now() - (properties?.lastModified.getTime() ?? 0))).to.be.below(60_000);
        expect(properties?.metadata).to.be.an('object');
      });

      it('returns the stored HTTP headers, MD5 and metadata, where storage keeps them', async function () {
        if (!fixture.capabilities.httpMetadata) this.skip();
        await fixture.put('derivatives/greeks.parquet', 'PAR1', {
          contentType: 'application/vnd.apache.parquet',
          contentDisposition: 'attachment; filename="greeks.parquet"',
          contentEncoding: 'identity',
          contentLanguage: 'pt-BR',
          cacheControl: 'private, max-age=60',
          metadata: { vendor: 'b3' },
        });

        const properties = await store.getProperties('derivatives/greeks.parquet');

        expect(properties).to.deep.include({
          contentType: 'application/vnd.apache.parquet',
          contentDisposition: 'attachment; filename="greeks.parquet"',
          contentEncoding: 'identity',
          contentLanguage: 'pt-BR',
          cacheControl: 'private, max-age=60',
          contentMd5: createHash('md5').update('PAR1').digest('base64'),
        });
        expect(properties?.metadata).to.deep.equal({ vendor: 'b3' });
      });

      it('returns the same etag on two reads of an unchanged blob', async () => {
        await fixture.put('a.txt', 'one');

        const first = await store.getProperties('a.txt');
        const second = await store.getProperties('a.txt');

        expect(second?.etag).to.equal(first?.etag);
      });

      it('returns a new etag once the blob is rewritten', async () => {
        await fixture.put('a.txt', 'one');
        const before = await store.getProperties('a.txt');

        await fixture.put('a.txt', 'second version');
        const after = await store.getProperties('a.txt');

        expect(after?.etag).to.not.equal(before?.etag);
        expect(after?.size).to.equal(14);
      });

      it('returns undefined when no blob has the path', async () => {
        expect(await store.getProperties('missing/file.csv')).to.equal(undefined);
      });

      it('returns undefined for a path that is only a folder of other blobs', async () => {
        await fixture.put('funds/a.csv', 'x');

        expect(await store.getProperties('funds')).to.equal(undefined);
      });

      it('returns undefined once the blob is removed', async () => {
        await fixture.put('a.txt', 'x');
        await fixture.remove('a.txt');

        expect(await store.getProperties('a.txt')).to.equal(undefined);
      });

      for (const path of ['funds/cvm/relatório diário.csv', 'derivatives/options/greeks 2024.parquet']) {
        it(`finds a blob whose path has spaces or accents (${path})`, async () => {
          await fixture.put(path, 'content');

          expect((await store.getProperties(path))?.size).to.equal(7);
          expect(await readAll(await store.read(path, { ifMatch: await etagOf(store, path) }))).to.deep.equal(
            Buffer.from('content'),
          );
        });
      }
    });

    describe('list', () => {
      beforeEach(async () => {
        await fixture.put('funds/cvm/relatório diário.csv', '12345');
        await fixture.put('funds/cvm/b.csv', '123');
        await fixture.put('funds/cvx.csv', '1');
        await fixture.put('funds-other/c.csv', '12');
        await fixture.put('derivatives/options/greeks 2024.parquet', '1234');
      });

      it('yields exactly the blobs under a folder prefix, with their sizes', async () => {
        const listed = sizesByPath(await listAll(store, 'funds/cvm/'));

        expect(listed).to.deep.equal({ 'funds/cvm/relatório diário.csv': 5, 'funds/cvm/b.csv': 3 });
      });

      it('yields every blob under a prefix whatever page size the caller asks (pages of 1 and 2 included)', async () => {
        for (const pageSize of [1, 2, 5000]) {
          const listed: string[] = [];
          for await (const blob of (store as BlobStore & { list(prefix: string, pageSize?: number): AsyncIterable<BlobSummary> }).list('funds/', pageSize)) listed.push(blob.path);
          expect(listed.sort(), `pages of ${pageSize}`).to.deep.equal(['funds/cvm/b.csv', 'funds/cvm/relatório diário.csv', 'funds/cvx.csv']);
        }
      });

      it('yields the blobs whose path starts with a partial last segment', async () => {
        const listed = Object.keys(sizesByPath(await listAll(store, 'funds/cv'))).sort();

        expect(listed).to.deep.equal(['funds/cvm/b.csv', 'funds/cvm/relatório diário.csv', 'funds/cvx.csv']);
      });

      it('yields every blob for the empty prefix', async () => {
        const listed = Object.keys(sizesByPath(await listAll(store, ''))).sort();

        expect(listed).to.deep.equal([
          'derivatives/options/greeks 2024.parquet',
          'funds-other/c.csv',
          'funds/cvm/b.csv',
          'funds/cvm/relatório diário.csv',
          'funds/cvx.csv',
        ]);
      });

      it('yields nothing for a prefix no blob has', async () => {
        expect(await listAll(store, 'equities/')).to.deep.equal([]);
        expect(await listAll(store, 'funds/zzz')).to.deep.equal([]);
      });

      it('yields the same etag and lastModified that getProperties returns', async () => {
        const [summary] = await listAll(store, 'funds/cvx');
        const properties = await store.getProperties('funds/cvx.csv');

        expect(summary?.etag).to.equal(properties?.etag);
        expect(summary?.lastModified.getTime()).to.equal(properties?.lastModified.getTime());
      });

      it('yields each of 50 blobs in one folder once', async () => {
        for (let i = 0; i < 50; i += 1) {
          await fixture.put(`many/file-${String(i).padStart(2, '0')}.csv`, 'x'.repeat(i));
        }

        const listed = await listAll(store, 'many/');

        expect(listed).to.have.length(50);
        expect(sizesByPath(listed)['many/file-49.csv']).to.equal(49);
      });
    });

    describe('existing', () => {
      // 10 wanted files in one folder (listed or read whole by stores that list dense folders), 2 in
      // another (probed), one at the top; some of each missing.
      const dense = Array.from({ length: 10 }, (_, i) => `daily/PETR4_2024-01-${String(i + 1).padStart(2, '0')}.csv`);

      beforeEach(async () => {
        for (const [i, path] of dense.entries()) if (i % 3 !== 0) await fixture.put(path, 'x'.repeat(i));
        await fixture.put('daily/VALE3_2024-01-01.csv', 'not wanted');
        await fixture.put('funds/cvm/relatório diário.csv', '12345');
        await fixture.put('top.csv', '12');
      });

      it('finds exactly the wanted paths that exist, dense folder, sparse folder and top level alike', async () => {
        const wanted = [...dense, 'funds/cvm/relatório diário.csv', 'funds/cvm/missing.csv', 'top.csv', 'absent.csv'];

        const found = await store.existing(wanted);

        const expected = [...dense.filter((_, i) => i % 3 !== 0), 'funds/cvm/relatório diário.csv', 'top.csv'].sort();
        expect([...found.keys()].sort()).to.deep.equal(expected);
        expect(found.size).to.equal(expected.length);
        expect([...found].map(([path, summary]) => [path, summary.path])).to.deep.equal([...found.keys()].map((path) => [path, path]));
        expect([...found.values()].map((summary) => summary.path)).to.deep.equal([...found.keys()]);
        const visited: string[] = [];
        found.forEach((summary, path, map) => {
          expect(map).to.equal(found);
          expect(summary.path).to.equal(path);
          visited.push(path);
        });
        expect(visited).to.deep.equal([...found.keys()]);
      });

      it('gives each file the size, etag and lastModified that getProperties returns', async () => {
        const wanted = [...dense, 'funds/cvm/relatório diário.csv', 'top.csv'];

        const found = await store.existing(wanted);

        for (const path of wanted) {
          const properties = await store.getProperties(path);
          const summary = found.get(path);
          expect(summary === undefined, path).to.equal(properties === undefined);
          if (summary === undefined || properties === undefined) continue;
          expect(summary.size, path).to.equal(properties.size);
          expect(summary.etag, path).to.equal(properties.etag);
          expect(summary.lastModified.getTime(), path).to.equal(properties.lastModified.getTime());
        }
      });

      it('finds nothing at a folder, under a file, or in a folder that does not exist', async () => {
        const found = await store.existing(['daily', 'funds/cvm', 'top.csv/x', 'nowhere/a.csv', ...Array.from({ length: 8 }, (_, i) => `nowhere/b${i}.csv`)]);

        expect([...found.keys()]).to.deep.equal([]);
      });

      it('answers a path asked twice once', async () => {
        const found = await store.existing(['top.csv', 'top.csv', ...dense, ...dense]);

        expect(found.size).to.equal(1 + dense.filter((_, i) => i % 3 !== 0).length);
      });

      it('notices a file removed since an earlier answer', async () => {
        await store.existing(dense);
        await fixture.remove(dense[1] as string);

        const found = await store.existing(dense);

        expect(found.has(dense[1] as string)).to.equal(false);
        expect(found.has(dense[2] as string)).to.equal(true);
      });
    });

    describe('read', () => {
      const bytes = patternedBytes(200 * 1024);

      beforeEach(async () => {
        await fixture.put('data/blob.bin', bytes);
      });

      it('streams the whole blob when no range is given', async () => {
        const content = await store.read('data/blob.bin', { ifMatch: await etagOf(store, 'data/blob.bin') });

        expect(Buffer.compare(await readAll(content), bytes)).to.equal(0);
      });

      it('streams exactly the bytes of an inclusive range that crosses chunk boundaries', async () => {
        const range = { start: 65_535, end: 131_073 };
        const ifMatch = await etagOf(store, 'data/blob.bin');

        const content = await store.read('data/blob.bin', { ifMatch, range });

        const read = await readAll(content);
        expect(read.length).to.equal(65_539);
        expect(Buffer.compare(read, bytes.subarray(65_535, 131_074))).to.equal(0);
      });

      it('streams the last byte alone for a one-byte range at the end', async () => {
        const last = bytes.length - 1;

        const content = await store.read('data/blob.bin', {
          ifMatch: await etagOf(store, 'data/blob.bin'),
          range: { start: last, end: last },
        });

        expect(await readAll(content)).to.deep.equal(Buffer.from([bytes[last] ?? -1]));
      });

      it('round-trips all 256 byte values', async () => {
        const everyByte = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
        await fixture.put('data/every-byte.bin', everyByte);

        const ifMatch = await etagOf(store, 'data/every-byte.bin');

        const content = await store.read('data/every-byte.bin', { ifMatch });

        expect(Buffer.compare(await readAll(content), everyByte)).to.equal(0);
      });

      it('yields no bytes for a 0-byte blob', async () => {
        await fixture.put('data/empty.csv', new Uint8Array(0));

        const content = await store.read('data/empty.csv', { ifMatch: await etagOf(store, 'data/empty.csv') });

        expect((await readAll(content)).length).to.equal(0);
      });

      it('throws ContentChanged when the blob was rewritten since its etag was read', async () => {
        const stale = await etagOf(store, 'data/blob.bin');
        await fixture.put('data/blob.bin', 'a new, shorter version');

        const error = await rejectionOf(store.read('data/blob.bin', { ifMatch: stale }));

        expect(error).to.be.instanceOf(ContentChanged);
      });

      it('throws ContentChanged for an etag the blob never had', async () => {
        const error = await rejectionOf(store.read('data/blob.bin', { ifMatch: '"not-the-etag"' }));

        expect(error).to.be.instanceOf(ContentChanged);
      });

      it('throws FileNotFound when no blob has the path', async () => {
        const error = await rejectionOf(store.read('data/missing.bin', { ifMatch: '"x"' }));

        expect(error).to.be.instanceOf(FileNotFound);
      });

      it('throws FileNotFound when the blob was removed since its etag was read', async () => {
        const etag = await etagOf(store, 'data/blob.bin');
        await fixture.remove('data/blob.bin');

        const error = await rejectionOf(store.read('data/blob.bin', { ifMatch: etag }));

        expect(error).to.be.instanceOf(FileNotFound);
      });

      it('fails, without hanging, when the signal was aborted before the read', async () => {
        const ifMatch = await etagOf(store, 'data/blob.bin');
        const controller = new AbortController();
        controller.abort();

        const error = await rejectionOf(
          (async () => readAll(await store.read('data/blob.bin', { ifMatch, signal: controller.signal })))(),
        );

        expect(error).to.have.property('name', 'AbortError');
      });

      it('rejects the iteration, without hanging, when the signal aborts mid-stream', async () => {
        const large = patternedBytes(4 * 1024 * 1024);
        await fixture.put('data/large.bin', large);
        const controller = new AbortController();
        const content = await store.read('data/large.bin', {
          ifMatch: await etagOf(store, 'data/large.bin'),
          signal: controller.signal,
        });

        let received = 0;
        const error = await rejectionOf(
          (async () => {
            for await (const chunk of content) {
              received += chunk.byteLength;
              controller.abort();
            }
          })(),
        );

        expect(error).to.have.property('name', 'AbortError');
        expect(received).to.be.below(large.length);
      });
    });

    describe('with a path that could leave the store', () => {
      for (const path of HOSTILE_PATHS) {
        const shown = JSON.stringify(path.length > 40 ? `${path.slice(0, 10)}… (${path.length} chars)` : path);

        it(`getProperties throws InvalidPath for ${shown}`, async () => {
          expect(await rejectionOf(store.getProperties(path))).to.be.instanceOf(InvalidPath);
        });

        it(`read throws InvalidPath for ${shown}`, async () => {
          expect(await rejectionOf(store.read(path, { ifMatch: '"x"' }))).to.be.instanceOf(InvalidPath);
        });
      }

      for (const prefix of ['../', 'a/../', '/', 'a//', 'a\\', '\u0000']) {
        it(`list throws InvalidPath for the prefix ${JSON.stringify(prefix)}`, async () => {
          expect(await rejectionOf(listAll(store, prefix))).to.be.instanceOf(InvalidPath);
        });
      }
    });

    describe('with symlinks', () => {
      beforeEach(function () {
        if (fixture.capabilities.symlinks === undefined) this.skip();
      });

      it('does not serve a symlink to a file outside the root', async () => {
        await fixture.capabilities.symlinks?.toFileOutsideRoot('leak.txt');

        expect(await store.getProperties('leak.txt')).to.equal(undefined);
        expect(await rejectionOf(store.read('leak.txt', { ifMatch: '"x"' }))).to.be.instanceOf(FileNotFound);
        expect(await listAll(store, '')).to.deep.equal([]);
        expect([...(await store.existing(['leak.txt'])).keys()]).to.deep.equal([]);
      });

      it('does not serve a file through a symlink to a folder outside the root', async () => {
        await fixture.capabilities.symlinks?.toFolderOutsideRoot('escape');

        expect(await store.getProperties('escape/secret.txt')).to.equal(undefined);
        const error = await rejectionOf(store.read('escape/secret.txt', { ifMatch: '"x"' }));
        expect(error).to.be.instanceOf(FileNotFound);
        expect(await listAll(store, 'escape/')).to.deep.equal([]);
        const wanted = ['escape/secret.txt', ...Array.from({ length: 8 }, (_, i) => `escape/other-${i}.txt`)];
        expect([...(await store.existing(wanted)).keys()]).to.deep.equal([]);
      });

      it('serves a symlink to a file inside the root under the link path', async () => {
        await fixture.put('data/real.csv', 'abc');
        await fixture.capabilities.symlinks?.toFileInsideRoot('alias.csv', 'data/real.csv');

        expect((await store.getProperties('alias.csv'))?.size).to.equal(3);
        expect(sizesByPath(await listAll(store, ''))).to.deep.equal({ 'data/real.csv': 3, 'alias.csv': 3 });
        const found = await store.existing(['alias.csv', 'data/real.csv']);
        expect(found.get('alias.csv')?.size).to.equal(3);
        expect(found.get('alias.csv')?.etag).to.equal(found.get('data/real.csv')?.etag);
      });
    });
  });
}

async function etagOf(store: BlobStore, path: string): Promise<string> {
  const properties = await store.getProperties(path);
  if (properties === undefined) throw new Error(`Test setup: no blob at ${path}`);
  return properties.etag;
}

async function readAll(content: BlobContent): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of content) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function listAll(store: BlobStore, prefix: string): Promise<BlobSummary[]> {
  const summaries: BlobSummary[] = [];
  for await (const summary of store.list(prefix)) summaries.push(summary);
  return summaries;
}

function sizesByPath(summaries: readonly BlobSummary[]): Record<string, number> {
  return Object.fromEntries(summaries.map((summary) => [summary.path, summary.size]));
}

/** Bytes whose value depends on the offset modulo a prime, so a shifted range cannot match. */
function patternedBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) bytes[i] = (i * 7) % 251;
  return bytes;
}

