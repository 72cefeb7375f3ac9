/**
 * Copy-ready commands for one file. None carries a secret or a token: each reads the client id and
 * secret from `DFG_CLIENT_ID` and `DFG_CLIENT_SECRET`, as `dfg` itself does.
 */

export interface S3Api {
  readonly endpointUrl: string;
  readonly bucket: string;
}

export interface CommandTarget {
  /** The gateway's origin, e.g. `https://files.example.net`. */
  readonly origin: string;
  readonly symbol: string;
  /** The storage path. */
  readonly path: string;
  /** `null` while the S3-compatible API is off: no `aws s3 cp` then. */
  readonly s3Api: S3Api | null;
}

export interface Command {
  readonly id: 'curl' | 'dfg' | 'python' | 'pandas' | 'aws';
  readonly label: string;
  readonly text: string;
}

/** `'text'` for a POSIX shell, whatever the text holds. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A Python string literal (JSON's escapes are Python's). */
function pythonString(text: string): string {
  return JSON.stringify(text);
}

export function commandsFor(target: CommandTarget): Command[] {
  const fileName = target.path.slice(target.path.lastIndexOf('/') + 1);
  const downloadUrl = `${target.origin}/download/${encodeURIComponent(target.symbol)}`;
  const tokenUrl = `${target.origin}/oauth/token`;
  const pythonToken = [
    'import os, requests',
    '',
    `token = requests.post(${pythonString(tokenUrl)}, data={"grant_type": "client_credentials"},`,
    '                      auth=(os.environ["DFG_CLIENT_ID"], os.environ["DFG_CLIENT_SECRET"]), timeout=30).json()["access_token"]',
    'headers = {"Authorization": f"Bearer {token}"}',
  ];
  const isParquet = fileName.toLowerCase().endsWith('.parquet');
  const commands: Command[] = [
    {
      id: 'curl',
      label: 'curl',
      text: [
        `TOKEN=$(curl -fsS -u "$DFG_CLIENT_ID:$DFG_CLIENT_SECRET" -d grant_type=client_credentials ${shellQuote(tokenUrl)} | jq -r .access_token)`,
        `curl -fL -H "Authorization: Bearer $TOKEN" -o ${shellQuote(fileName)} ${shellQuote(downloadUrl)}`,
      ].join('\n'),
    },
    {
      id: 'dfg',
      label: 'dfg',
      text: `DFG_URL=${shellQuote(target.origin)} dfg download ${shellQuote(target.symbol)} -o ${shellQuote(fileName)}`,
    },
    {
      id: 'python',
      label: 'Python (requests)',
      text: [
        ...pythonToken,
        `with requests.get(${pythonString(downloadUrl)}, headers=headers, stream=True, timeout=60) as response:`,
        '    response.raise_for_status()',
        `    with open(${pythonString(fileName)}, "wb") as file:`,
        '        for chunk in response.iter_content(1 << 20):',
        '            file.write(chunk)',
      ].join('\n'),
    },
    {
      id: 'pandas',
      label: 'Python (pandas)',
      text: isParquet
        ? [
            ...pythonToken.map((line) => (line === 'import os, requests' ? 'import io, os, requests\nimport pandas as pd' : line)),
            `response = requests.get(${pythonString(downloadUrl)}, headers=headers, timeout=60)`,
            'response.raise_for_status()',
            'frame = pd.read_parquet(io.BytesIO(response.content))',
          ].join('\n')
        : [
            ...pythonToken.map((line) => (line === 'import os, requests' ? 'import os, requests\nimport pandas as pd' : line)),
            `frame = pd.read_csv(${pythonString(downloadUrl)}, storage_options=headers)`,
          ].join('\n'),
    },
  ];
  if (target.s3Api !== null) {
    commands.push({
      id: 'aws',
      label: 'aws s3 cp',
      text: `aws s3 cp ${shellQuote(`s3://${target.s3Api.bucket}/${target.path}`)} ${shellQuote(fileName)} --endpoint-url ${shellQuote(target.s3Api.endpointUrl)}`,
    });
  }
  return commands;
}
