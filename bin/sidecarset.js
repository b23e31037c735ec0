#!/usr/bin/env node
import { sizeHeapForServing, main } from '../dist/main.js';

const args = process.argv.slice(2);
sizeHeapForServing(args);
process.exitCode = await main(args, {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
