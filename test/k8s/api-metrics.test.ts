import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { HttpLibrary } from '@kubernetes/client-node';
import {
  CoreV1Api,
  HttpMethod,
  KubeConfig,
  Observable,
  RequestContext as Request,
  ResponseContext,
} from '@kubernetes/client-node';
import { Registry } from 'prom-client';

import type { ApiRequest } from '../../src/k8s/api-metrics.js';
import { observeApiRequests, observingHttpLibrary } from '../../src/k8s/api-metrics.js';
import { createClientMetrics } from '../../src/server/client-metrics.js';

const body = { text: () => Promise.resolve('{}'), binary: () => Promise.resolve(Buffer.from('')) };

/** An HTTP library that answers `status`, or fails with no response, after 250 ms of `clock`. */
function fakeLibrary(status: number | 'fail', clock: { t: number }): HttpLibrary {
  return {
    send: () => {
      clock.t += 0.25;
      return new Observable(
        status === 'fail'
          ? Promise.reject(new Error('connect ECONNREFUSED'))
          : Promise.resolve(new ResponseContext(status, {}, body)),
      );
    },
  };
}

describe('API request metrics', () => {
  it('reports method, status code and duration; <error> when no response came', async () => {
    const seen: ApiRequest[] = [];
    const clock = { t: 10 };
    const request = new Request('https://api.example/api/v1/pods', HttpMethod.PATCH);
    for (const status of [200, 409, 'fail'] as const) {
      const library = observingHttpLibrary(
        fakeLibrary(status, clock),
        (r) => void seen.push(r),
        () => clock.t,
      );
      await library
        .send(request)
        .toPromise()
        .catch(() => undefined);
    }
    assert.deepEqual(seen, [
      { method: 'PATCH', code: '200', seconds: 0.25 },
      { method: 'PATCH', code: '409', seconds: 0.25 },
      { method: 'PATCH', code: '<error>', seconds: 0.25 },
    ]);
  });

  it('counts the requests of every API client the KubeConfig makes, under client-go names', async () => {
    const kubeConfig = new KubeConfig();
    // Nothing listens on port 1: the request fails without a response.
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const registry = new Registry();
    observeApiRequests(kubeConfig, createClientMetrics(registry));
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await assert.rejects(core.listNamespace());
    const text = await registry.metrics();
    assert.match(text, /^rest_client_requests_total\{method="GET",code="<error>"\} 1$/m);
    assert.match(text, /^rest_client_request_duration_seconds_count\{verb="GET"\} 1$/m);
  });
});
