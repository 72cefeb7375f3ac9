import { expect } from 'chai';
import { Entitlement, type CatalogProvider } from '../../src/domain/entitlement.js';
import { CatalogNotFound, NotEntitled } from '../../src/domain/errors.js';
import { FileCatalog } from '../../src/domain/file-catalog.js';
import type { Principal } from '../../src/domain/ports.js';

const acme: Principal = { clientId: 'acme', indexPath: 'indexes/acme.csv' };
const stranger: Principal = { clientId: 'stranger', indexPath: 'indexes/stranger.csv' };

const catalogs: CatalogProvider = {
  async catalogAt(indexPath) {
    if (indexPath !== acme.indexPath) return undefined;
    return FileCatalog.fromIndex([
      { row: 1, Symbol: 'QUOTES', ShortDescriptionPt: '', ShortDescription: 'Quotes', FileName: 'b3/quotes.parquet' },
    ]).catalog;
  },
};
const clock = { now: () => new Date('2026-11-26T12:00:00Z') };
const entitlement = new Entitlement(catalogs, clock);

describe('Entitlement', function () {
  it('gives the caller the catalog of its own index', async function () {
    expect((await entitlement.catalogFor(acme)).count).to.equal(1);
  });

  it('throws CatalogNotFound when the caller has no index', async function () {
    const failure = await entitlement.catalogFor(stranger).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(CatalogNotFound);
    expect((failure as Error).message).to.match(/No catalog was found for client "stranger"/);
  });

  it('resolves a listed symbol to its entry', async function () {
    expect((await entitlement.entryForSymbol(acme, 'QUOTES')).fileName).to.equal('b3/quotes.parquet');
  });

  it('throws NotEntitled for a symbol outside the subscription', async function () {
    const failure = await entitlement.entryForSymbol(acme, 'OTHER').catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(NotEntitled);
    expect((failure as Error).message).to.equal('Symbol "OTHER" is not in the subscription of client "acme"');
  });

  it('resolves a listed storage path to its entry', async function () {
    expect((await entitlement.entryForPath(acme, 'b3/quotes.parquet')).symbol).to.equal('QUOTES');
  });

  it('throws NotEntitled for a path the index does not list, even one that exists in storage', async function () {
    const failure = await entitlement.entryForPath(acme, 'indexes/acme.csv').catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(NotEntitled);
  });

  describe('before a refusal', function () {
    it('asks the provider for a catalog checked since the request arrived, and serves a row it has', async function () {
      const asked: Array<{ indexPath: string; since: number }> = [];
      const rechecking = new Entitlement(
        {
          ...catalogs,
          async recheckedCatalogAt(indexPath, since) {
            asked.push({ indexPath, since });
            return FileCatalog.fromIndex([{ row: 1, Symbol: 'NEW', ShortDescriptionPt: '', ShortDescription: '', FileName: 'b3/new.parquet' }]).catalog;
          },
        },
        clock,
      );
      expect((await rechecking.entryForSymbol(acme, 'NEW')).fileName).to.equal('b3/new.parquet');
      expect((await rechecking.entryForPath(acme, 'b3/new.parquet')).symbol).to.equal('NEW');
      expect((await rechecking.entryForSymbol(acme, 'QUOTES')).fileName, 'an entry of the kept catalog asks nothing').to.equal('b3/quotes.parquet');
      expect(asked).to.deep.equal([
        { indexPath: acme.indexPath, since: clock.now().getTime() },
        { indexPath: acme.indexPath, since: clock.now().getTime() },
      ]);
      await rechecking.entryForSymbol(acme, 'NONE').then(
        () => expect.fail('refused'),
        (error: unknown) => expect(error).to.be.instanceOf(NotEntitled),
      );
    });
  });
});
