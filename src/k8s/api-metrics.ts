/**
 * Every API request the clients of a KubeConfig make, reported with its method, status code and
 * duration: what client-go's rest_client_requests_total and rest_client_request_duration_seconds
 * count (src/server/client-metrics.ts). client-node builds each API client's HTTP library in
 * makeApiClient; this makes the KubeConfig build them around one that observes the request.
 * Watches take another path (Watch, with fetch) and are not counted.
 */
import type {
  ApiConstructor,
  ApiType,
  HttpLibrary,
  KubeConfig,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node';
import {
  IsomorphicFetchHttpLibrary,
  Observable,
  ServerConfiguration,
  createConfiguration,
} from '@kubernetes/client-node';

export interface ApiRequest {
  /** GET, POST, PATCH, ... */
  method: string;
  /** The HTTP status code, or `<error>` when no response came (client-go's label). */
  code: string;
  seconds: number;
}

export type ApiRequestObserver = (request: ApiRequest) => void;

/** An HTTP library that tells `observe` about each request `inner` sends. */
export function observingHttpLibrary(
  inner: HttpLibrary,
  observe: ApiRequestObserver,
  clock: () => number = () => performance.now() / 1000,
): HttpLibrary {
  return {
    send(request: RequestContext): Observable<ResponseContext> {
      const started = clock();
      const method = request.getHttpMethod().toString();
      const done = (code: string): void => {
        observe({ method, code, seconds: clock() - started });
      };
      return new Observable(
        inner
          .send(request)
          .toPromise()
          .then(
            (response) => {
              done(String(response.httpStatusCode));
              return response;
            },
            (err: unknown) => {
              done('<error>');
              throw err;
            },
          ),
      );
    },
  };
}

/** Makes every API client `kubeConfig` makes from now on report its requests to `observe`. */
export function observeApiRequests(
  kubeConfig: KubeConfig,
  observe: ApiRequestObserver,
): KubeConfig {
  const httpApi = observingHttpLibrary(new IsomorphicFetchHttpLibrary(), observe);
  kubeConfig.makeApiClient = <T extends ApiType>(apiClientType: ApiConstructor<T>): T => {
    // As client-node's makeApiClient, with httpApi.
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    return new apiClientType(
      createConfiguration({
        baseServer: new ServerConfiguration(cluster.server, {}),
        authMethods: { default: kubeConfig },
        httpApi,
      }),
    );
  };
  return kubeConfig;
}
