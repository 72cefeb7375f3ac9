import { expect } from 'chai';
import { parseBasicCredentials, parseBearerAuthorization } from '../../../src/http-wire/grammar/authorization.js';
import { expectLinearWork } from '../../support/linearity.js';

describe('the Authorization header (src/http-wire/grammar/authorization.ts)', function () {
  describe('parseBearerAuthorization (RFC 6750 section 2.1)', function () {
    it('reads a b64token after "Bearer", the scheme in any case', function () {
      for (const header of ['Bearer abc.DEF-_~+/==', 'bearer abc.DEF-_~+/==', 'BEARER  abc.DEF-_~+/== ']) {
        expect(parseBearerAuthorization(header)).to.deep.equal({ kind: 'token', token: 'abc.DEF-_~+/==' });
      }
    });

    it('reads no header, and another scheme, as no bearer credentials', function () {
      expect(parseBearerAuthorization(undefined)).to.deep.equal({ kind: 'none' });
      expect(parseBearerAuthorization('Basic YTpi')).to.deep.equal({ kind: 'none' });
      expect(parseBearerAuthorization('Bearerish abc')).to.deep.equal({ kind: 'none' });
    });

    for (const header of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer a=b', 'Bearer ä', 'Bearer a,b']) {
      it(`reads ${JSON.stringify(header)} as malformed`, function () {
        expect(parseBearerAuthorization(header)).to.deep.equal({ kind: 'malformed' });
      });
    }

    it('reads a number of characters linear in the input (counted) for a long token followed by junk', function () {
      expectLinearWork(parseBearerAuthorization, (n) => `Bearer ${'a'.repeat(n - 9)} !`);
    });

    it('reads a number of characters linear in the input (counted) for a long run of spaces', function () {
      expectLinearWork(parseBearerAuthorization, (n) => `Bearer${' '.repeat(n - 7)}!`);
    });
  });

  describe('parseBasicCredentials (RFC 6749 section 2.3.1)', function () {
    const encode = (id: string, secret: string): string => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

    it('form-decodes the id and the secret', function () {
      expect(parseBasicCredentials(encode('acme%20eu', 'a+b%3Ac'))).to.deep.equal({ clientId: 'acme eu', clientSecret: 'a b:c' });
    });

    for (const header of ['Basic', 'Basic !!!', encode('', 'secret'), `Basic ${Buffer.from('no-colon').toString('base64')}`, encode('a', '%zz'), 'Bearer abc']) {
      it(`refuses ${JSON.stringify(header)}`, function () {
        expect(parseBasicCredentials(header)).to.equal(undefined);
      });
    }

    it('reads a number of characters linear in the input (counted) for long base64 followed by junk', function () {
      expectLinearWork(parseBasicCredentials, (n) => `Basic ${'A'.repeat(n - 8)} !`);
    });
  });
});
