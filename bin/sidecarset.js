#!/usr/bin/env node
import { keepYoungGenerationSmall, main } from '../dist/main.js';

const args = process.argv.slice(2);
keepYoungGenerationSmall(args);
process.exitCode = await main(args, {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
