#!/usr/bin/env node
/**
 * Process entry of the `clients` command line (`npm run clients -- <command>`); the work is in
 * `runClientsCli`. The exit code is set rather than forced, so piped output is flushed first.
 */
import { runClientsCli } from './clients-command.js';

process.exitCode = await runClientsCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
});
