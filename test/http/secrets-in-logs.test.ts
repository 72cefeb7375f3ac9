import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { startGateway } from '../support/gateway.js';
import { buildIndexCsv, buildIndexRow } from '../support/index-csv-builder.js';
import { createAuditTrail } from '../../src/adapters/audit/audit-trail.js';
import { captureLog } from '../support/log-capture.js';

/*
 * No secret, token or Authorization value ever reaches a log line, wherever a client puts it: in a
 * query string (which request logs would otherwise keep), in a body, or in a header. The whole output
 * of a run, logs at their most verbose level and audit records, is searched for each of them.
 */

const client = { clientId: 'acme', secret: 'S3CRET-in-the-query-0123456789' };

describe('secrets and tokens in logs', function () {
  it('never appear in any log line, at any level, whatever the request carried them in', async function () {
    const log = captureLog('trace');
    const store = new MemoryBlobStore();
    store.put('indexes/acme.csv', buildIndexCsv([buildIndexRow({ Symbol: 'A', FileName: 'data/a.csv' })]));
    store.put('data/a.csv', 'a\n');
    // The audit trail writes to the same output, as on stdout in production.
    const audit = createAuditTrail(log.stream);
    const gateway = await startGateway({ store, clients: [client], logger: log.logger, audit });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const basic = `Basic ${Buffer.from(`${client.clientId}:${client.secret}`).toString('base64')}`;
    try {
      const token = await gateway.tokenFor(client.clientId);
      const requests: Array<[string, string, Record<string, string>, string?]> = [
        ['POST', `/oauth/token?client_id=acme&client_secret=${client.secret}`, form, 'grant_type=client_credentials'],
        ['POST', '/oauth/token', form, `grant_type=client_credentials&client_id=acme&client_secret=${client.secret}`],
        ['POST', '/oauth/token', { ...form, authorization: basic }, 'grant_type=client_credentials'],
        ['POST', '/oauth/token', form, `grant_type=client_credentials&client_id=acme&client_secret=${client.secret}x`],
        ['GET', `/catalog?access_token=${token}`, {}],
        ['GET', `/download/A?access_token=${token}&limit=5`, { authorization: `Bearer ${token}` }],
        ['GET', '/catalog', { authorization: `Bearer ${token}` }],
        ['GET', '/catalog', { authorization: `Bearer ${token}x` }],
        ['GET', `/data/a.csv?token=${token}`, { authorization: `Bearer ${token}` }],
      ];
      for (const [method, path, headers, body] of requests) {
        await gateway.request(method, path, { headers, ...(body !== undefined && { body }), unchecked: true });
      }
      const text = log.text();
      expect(log.lines.length, 'the run logged something').to.be.above(requests.length);
      expect(log.lines.some((line) => line['event'] === 'token'), 'audit records are in the output').to.equal(true);
      expect(text).to.include('[redacted]');
      for (const [what, value] of [
        ['the client secret', client.secret],
        ['the bearer token', token],
        ['the token\'s signature', token.split('.')[2] ?? token],
        ['the Basic credentials', basic.slice('Basic '.length)],
      ] as const) {
        expect(text.includes(value), `${what} appears in the log`).to.equal(false);
      }
    } finally {
      await gateway.close();
    }
  });
});
