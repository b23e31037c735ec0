/**
 * The worker thread that reads files mode's inputs (src/cache/worker-loader.ts starts it), so that
 * parsing and validating thousands of SidecarSets never holds up a request (issue 15).
 */
import { parentPort, workerData } from 'node:worker_threads';

import type { FilesPaths } from './load-files.js';
import { loadFiles } from './load-files.js';
import type { LoadReply } from './worker-loader.js';
import { failedLoad } from './worker-loader.js';

const paths = workerData as FilesPaths;

parentPort?.on('message', (id: number) => {
  const reply = (message: LoadReply): void => parentPort?.postMessage(message);
  loadFiles(paths).then(
    (files) => {
      reply({ id, files });
    },
    (err: unknown) => {
      reply(failedLoad(id, err));
    },
  );
});
