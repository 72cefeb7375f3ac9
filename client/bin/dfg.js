#!/usr/bin/env node
// A committed launcher rather than a bin inside dist/: npm links and marks bins executable at
// install time, before `npm run build` has produced dist/.
import { main } from '../dist/src/cli/dfg.js';

await main();
