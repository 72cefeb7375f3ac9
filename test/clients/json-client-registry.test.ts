import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  defaultIndexPath,
  isValidClientId,
  JsonClientRegistry,
  type ClientRegistryFile,
  type StoredClient,
} from '../../src/adapters/clients/json-client-registry.js';

function buildStoredClient(overrides: Partial<StoredClient> = {}): StoredClient {
  return {
    secretHash: 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    indexPath: 'indexes/acme.csv',
    enabled: true,
    createdAt: '2024-01-02T10:00:00.000Z',
    updatedAt: '2024-01-02T10:00:00.000Z',
    ...overrides,
  };
}

function buildFile(clients: Record<string, StoredClient>): ClientRegistryFile {
  return { version: 1, clients };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error('expected a rejection');
}

/** Counts `fs.promises.readFile` calls, which the registry makes through the shared `promises` object. */
async function countReads<T>(body: () => Promise<T>): Promise<{ result: T; reads: number }> {
  const original = fsp.readFile;
  let reads = 0;
  fsp.readFile = ((...args: Parameters<typeof original>) => {
    reads += 1;
    return original(...args);
  }) as typeof original;
  try {
    return { result: await body(), reads };
  } finally {
    fsp.readFile = original;
  }
}

describe('JsonClientRegistry', () => {
  let dir: string;
  let file: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'json-client-registry-'));
    file = join(dir, 'clients.json');
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('find', () => {
    it('returns the client with its hash, index path and enabled flag', async () => {
      await writeFile(file, JSON.stringify(buildFile({ acme: buildStoredClient({ enabled: false }) })));
      const client = await new JsonClientRegistry(file).find('acme');
      expect(client).to.deep.equal({
        clientId: 'acme',
        secretHash: buildStoredClient().secretHash,
        indexPath: 'indexes/acme.csv',
        enabled: false,
      });
    });

    it('returns undefined for an unknown client, an invalid id, or a name of Object.prototype', async () => {
      await writeFile(file, JSON.stringify(buildFile({ acme: buildStoredClient() })));
      const registry = new JsonClientRegistry(file);
      expect(await registry.find('other')).to.equal(undefined);
      expect(await registry.find('../acme')).to.equal(undefined);
      expect(await registry.find('constructor')).to.equal(undefined);
      expect(await registry.find('__proto__')).to.equal(undefined);
      expect(await registry.find('hasOwnProperty')).to.equal(undefined);
    });

    it('returns undefined when the file does not exist, and does not create it', async () => {
      expect(await new JsonClientRegistry(file).find('acme')).to.equal(undefined);
      expect(await readdir(dir)).to.deep.equal([]);
    });

    it('reads the file once while it is unchanged', async () => {
      await writeFile(file, JSON.stringify(buildFile({ acme: buildStoredClient() })));
      const registry = new JsonClientRegistry(file);
      const { reads } = await countReads(async () => {
        for (let i = 0; i < 5; i += 1) await registry.find('acme');
      });
      expect(reads).to.equal(1);
    });

    it('sees a change written by another process at once, with the same instance', async () => {
      const before = buildStoredClient({ secretHash: `${'a'.repeat(40)}` });
      const after = buildStoredClient({ secretHash: `${'b'.repeat(40)}` });
      await writeFile(file, JSON.stringify(buildFile({ acme: before })));
      const registry = new JsonClientRegistry(file);
      expect((await registry.find('acme'))?.secretHash).to.equal(before.secretHash);

      // Same size, written in place (same inode); the mtime is moved on explicitly so the test
      // does not depend on the file system's timestamp granularity.
      await writeFile(file, JSON.stringify(buildFile({ acme: after })));
      const future = new Date(Date.now() + 10_000);
      await utimes(file, future, future);

      expect((await registry.find('acme'))?.secretHash).to.equal(after.secretHash);
    });

    it('with recheckMs, stats the file at most once per period, and sees a change once the period is over', async () => {
      await writeFile(file, JSON.stringify(buildFile({ acme: buildStoredClient() })));
      let now = 0;
      const registry = new JsonClientRegistry(file, { recheckMs: 1000, now: () => now });
      expect(await registry.find('acme')).to.not.equal(undefined);
      await rm(file);
      now = 999;
      expect(await registry.find('acme'), 'within the period: the last look stands').to.not.equal(undefined);
      now = 1000;
      expect(await registry.find('acme'), 'after it: the file is gone').to.equal(undefined);
    });

    it('sees a client added after the file was first found missing', async () => {
      const registry = new JsonClientRegistry(file);
      expect(await registry.find('acme')).to.equal(undefined);
      await new JsonClientRegistry(file).save(buildFile({ acme: buildStoredClient() }));
      expect((await registry.find('acme'))?.clientId).to.equal('acme');
    });

    it('forgets the clients when the file is deleted', async () => {
      await writeFile(file, JSON.stringify(buildFile({ acme: buildStoredClient() })));
      const registry = new JsonClientRegistry(file);
      expect(await registry.find('acme')).to.not.equal(undefined);
      await rm(file);
      expect(await registry.find('acme')).to.equal(undefined);
    });

    it('throws an error naming the file when it is not JSON, and recovers once it is fixed', async () => {
      await writeFile(file, '{ "version": 1, "clients": {');
      const registry = new JsonClientRegistry(file);
      const error = await rejection(registry.find('acme'));
      expect(error.message).to.include(file).and.to.include('not valid JSON');

      await writeFile(file, JSON.stringify(buildFile({ acme: buildStoredClient() })));
      const future = new Date(Date.now() + 10_000);
      await utimes(file, future, future);
      expect((await registry.find('acme'))?.clientId).to.equal('acme');
    });

    const malformed: Record<string, { json: unknown; says: string }> = {
      'an array at the top level': { json: [], says: 'top level must be an object' },
      'another version': { json: { version: 2, clients: {} }, says: '"version" must be 1' },
      'no clients object': { json: { version: 1 }, says: '"clients" must be an object' },
      'an invalid client id': { json: buildFile({ '.hidden': buildStoredClient() }), says: 'clients[".hidden"]: invalid client id' },
      'a missing secret hash': {
        json: { version: 1, clients: { acme: { ...buildStoredClient(), secretHash: undefined } } },
        says: 'clients["acme"].secretHash must be a non-empty string',
      },
      'a validUntil that is not an ISO 8601 instant': {
        json: buildFile({ acme: { ...buildStoredClient(), validUntil: 'next year' } }),
        says: 'clients["acme"].validUntil must be an ISO 8601 date or date-time',
      },
      'a term that ends before it starts': {
        json: buildFile({ acme: { ...buildStoredClient(), validFrom: '2027-01-01T00:00:00.000Z', validUntil: '2026-01-01T00:00:00.000Z' } }),
        says: 'clients["acme"].validFrom must come before validUntil',
      },
      'a monthlyBytes that is not a whole number': {
        json: buildFile({ acme: { ...buildStoredClient(), monthlyBytes: 1.5 } }),
        says: 'clients["acme"].monthlyBytes must be a whole number of bytes',
      },
      'an enabled flag that is a string': {
        json: { version: 1, clients: { acme: { ...buildStoredClient(), enabled: 'yes' } } },
        says: 'clients["acme"].enabled must be true or false',
      },
    };
    for (const [name, { json, says }] of Object.entries(malformed)) {
      it(`throws an error naming the file and the problem for ${name}`, async () => {
        await writeFile(file, JSON.stringify(json));
        const error = await rejection(new JsonClientRegistry(file).find('acme'));
        expect(error.message).to.include(file).and.to.include('malformed').and.to.include(says);
      });
    }
  });

  describe('load', () => {
    it('returns an empty registry when the file does not exist', async () => {
      const loaded = await new JsonClientRegistry(file).load();
      expect(loaded.version).to.equal(1);
      expect(Object.keys(loaded.clients)).to.deep.equal([]);
    });

    it('throws the same clear error as find for a malformed file', async () => {
      await writeFile(file, 'not json');
      const error = await rejection(new JsonClientRegistry(file).load());
      expect(error.message).to.include(file).and.to.include('not valid JSON');
    });
  });

  describe('save', () => {
    it('writes a file that load and find read back', async () => {
      const registry = new JsonClientRegistry(file);
      await registry.save(buildFile({ acme: buildStoredClient(), beta: buildStoredClient({ indexPath: 'b.csv' }) }));
      const loaded = await registry.load();
      expect(loaded.clients).to.deep.equal({ acme: buildStoredClient(), beta: buildStoredClient({ indexPath: 'b.csv' }) });
      expect((await registry.find('beta'))?.indexPath).to.equal('b.csv');
      expect(JSON.parse(await readFile(file, 'utf8'))).to.have.property('version', 1);
    });

    it('creates the file with mode 0600, and makes an existing 0644 file 0600', async () => {
      const registry = new JsonClientRegistry(file);
      await registry.save(buildFile({}));
      expect((await stat(file)).mode & 0o777).to.equal(0o600);

      await fsp.chmod(file, 0o644);
      await registry.save(buildFile({ acme: buildStoredClient() }));
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
    });

    it('creates the missing directory', async () => {
      const nested = new JsonClientRegistry(join(dir, 'conf', 'clients.json'));
      await nested.save(buildFile({ acme: buildStoredClient() }));
      expect((await nested.find('acme'))?.clientId).to.equal('acme');
    });

    it('replaces the file by rename (a new inode) and leaves no temporary file behind', async () => {
      const registry = new JsonClientRegistry(file);
      await registry.save(buildFile({}));
      const first = await stat(file);
      await registry.save(buildFile({ acme: buildStoredClient() }));
      const second = await stat(file);
      expect(second.ino).to.not.equal(first.ino);
      expect(await readdir(dir)).to.deep.equal(['clients.json']);
    });

    it('never lets a concurrent reader see a partly written file', async () => {
      const registry = new JsonClientRegistry(file);
      await registry.save(buildFile({}));
      let writing = true;
      const reader = (async () => {
        let reads = 0;
        while (writing || reads === 0) {
          JSON.parse(await readFile(file, 'utf8'));
          reads += 1;
        }
        return reads;
      })();
      for (let i = 0; i < 30; i += 1) {
        const clients: Record<string, StoredClient> = {};
        for (let c = 0; c <= i; c += 1) clients[`client-${c}`] = buildStoredClient({ indexPath: `indexes/${'x'.repeat(200)}.csv` });
        await registry.save(buildFile(clients));
      }
      writing = false;
      expect(await reader).to.be.greaterThan(0);
    });

    it('keeps a client whose id is __proto__ as an ordinary client', async () => {
      const registry = new JsonClientRegistry(file);
      const loaded = await registry.load();
      loaded.clients['__proto__'] = buildStoredClient({ indexPath: 'indexes/__proto__.csv' });
      await registry.save(loaded);
      expect((await registry.find('__proto__'))?.indexPath).to.equal('indexes/__proto__.csv');
      expect(Object.keys((await registry.load()).clients)).to.deep.equal(['__proto__']);
    });
  });
});

describe('client ids', () => {
  it('accepts 1 to 64 characters of A-Z a-z 0-9 . _ - not starting with a dot', () => {
    for (const id of ['a', 'acme', 'ACME-corp_2024.prod', 'x'.repeat(64), '_x', '-x', 'a..b']) {
      expect(isValidClientId(id), id).to.equal(true);
    }
  });

  it('rejects empty, too long, dot-first, and ids with other characters', () => {
    for (const id of ['', 'x'.repeat(65), '.acme', '..', 'a/b', 'a b', 'açme', 'a\\b', 'a\nb', 'a:b']) {
      expect(isValidClientId(id), JSON.stringify(id)).to.equal(false);
    }
  });

  it('give a default index path of indexes/<client_id>.csv', () => {
    expect(defaultIndexPath('acme')).to.equal('indexes/acme.csv');
  });
});
