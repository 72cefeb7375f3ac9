import type { Writable } from 'node:stream';

export interface DemoClient {
  readonly port: number;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** What the demo serves from, and notes printed under the credentials. */
export interface DemoSetting {
  readonly serving: string;
  readonly notes: readonly string[];
}

/** The embedded default: the bundled folder and an in-memory demo client. */
const EMBEDDED_DEFAULT: DemoSetting = {
  serving: 'the bundled sample data',
  notes: ['(a new secret is generated at every start; set CLIENTS_FILE to use registered clients)'],
};

/**
 * What a demo prints at start: the demo credentials and commands that work as pasted. The embedded
 * default prints it, and so does `npm run start:azurite` with its own setting.
 */
export function printDemoInstructions(out: Writable, demo: DemoClient, setting: DemoSetting = EMBEDDED_DEFAULT): void {
  const base = `http://localhost:${demo.port}`;
  out.write(
    [
      '',
      `Data File Gateway is serving ${setting.serving} with a demo client:`,
      `  client_id:     ${demo.clientId}`,
      `  client_secret: ${demo.clientSecret}`,
      ...setting.notes.map((note) => `  ${note}`),
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
