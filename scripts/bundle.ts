/**
 * `npm run build`: the sources, with the Kubernetes client, bundled by esbuild into dist/
 * (docs/adr/0029-bundled-kubernetes-client.md). @kubernetes/client-node loads its whole generated
 * API (20 MB of source, every group and model) when any part of it is imported; bundled, only the
 * API classes the controller and the webhook use are kept. Every other dependency is imported from
 * node_modules as usual.
 *
 * Two entry points: the CLI (dist/main.js, which bin/sidecarset.js runs) and the files-mode reload
 * worker (dist/reload-worker.js, which src/cache/worker-loader.ts starts from beside itself). What
 * is imported on demand (cluster mode, with the Kubernetes client) stays in chunks of its own,
 * loaded when imported. Minified syntax and whitespace, names kept (stack traces name their
 * functions); the source maps beside the files give the TypeScript positions under
 * `node --enable-source-maps`.
 */
import { rm } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import { build } from 'esbuild';

const root = new URL('../', import.meta.url).pathname;
const outdir = `${root}dist`;
const BUNDLED = '@kubernetes/client-node';

/** Every package but the Kubernetes client stays an import from node_modules. */
const dependenciesFromNodeModules: Plugin = {
  name: 'dependencies-from-node-modules',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^[^./]/ }, ({ path }) =>
      path === BUNDLED || path.startsWith(`${BUNDLED}/`) ? undefined : { path, external: true },
    );
  },
};

await rm(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/cli/main.ts', 'reload-worker': 'src/cache/reload-worker.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [dependenciesFromNodeModules],
  minifySyntax: true,
  minifyWhitespace: true,
  keepNames: true,
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
});
