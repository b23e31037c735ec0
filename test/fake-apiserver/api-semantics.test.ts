/**
 * The API server behaviour our code depends on (test/scenarios/api-semantics.ts), on the fake.
 * test/e2e/api-semantics.e2e.ts runs the same checks on a real kube-apiserver.
 */
import { after, before, describe } from 'node:test';

import { CoreV1Api } from '@kubernetes/client-node';

import { apiSemantics } from '../scenarios/api-semantics.js';
import type { FakeApiServer } from './index.js';
import { startFakeApiServer } from './index.js';

describe('API semantics on the fake API server', () => {
  let server: FakeApiServer | undefined;
  before(async () => {
    server = await startFakeApiServer();
  });
  after(async () => {
    await server?.close();
  });
  apiSemantics(() => {
    if (server === undefined) throw new Error('the server did not start');
    const kc = server.kubeConfig();
    return {
      kubeConfig: () => kc,
      async createNamespace(name) {
        await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
      },
    };
  });
});
