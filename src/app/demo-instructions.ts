import type { Writable } from 'node:stream';

export interface DemoClient {
  readonly port: number;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** What the embedded default prints at start: the demo credentials and commands that work as pasted. */
export function printDemoInstructions(out: Writable, demo: DemoClient): void {
  const base = `http://localhost:${demo.port}`;
  out.write(
    [
      '',
      'Data File Gateway is serving the bundled sample data with a demo client:',
      `  client_id:     ${demo.clientId}`,
      `  client_secret: ${demo.clientSecret}`,
      '  (a new secret is generated at every start; set CLIENTS_FILE to use registered clients)',
      '',
      'Try it:',
      `  TOKEN=$(curl -s -X POST ${base}/oauth/token -d grant_type=client_credentials -d client_id=${demo.clientId} -d client_secret=${demo.clientSecret} | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
      `  curl -s -H "Authorization: Bearer $TOKEN" ${base}/catalog`,
      `  curl -s -H "Authorization: Bearer $TOKEN" "${base}/list?limit=10"`,
      `  curl -s -H "Authorization: Bearer $TOKEN" ${base}/info/SELIC_HISTORY`,
      `  curl -OJ -H "Authorization: Bearer $TOKEN" ${base}/download/SELIC_HISTORY`,
      `  curl -o greeks.parquet -H "Authorization: Bearer $TOKEN" "${base}/derivatives/options/greeks%202024.parquet"`,
      '',
    ].join('\n'),
  );
}
