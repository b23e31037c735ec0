/**
 * A failure of a cluster command that the CLI reports in one line with exit status 1: the API
 * server's answer, or why the cluster could not be reached. Its own module, free of client-node,
 * so that the CLI's error reporting does not load the Kubernetes client.
 */
export class ClusterError extends Error {
  override name = 'ClusterError';
}

/** The API server answered 409: another writer changed the object first. */
export class ConflictError extends ClusterError {
  override name = 'ConflictError';
}

export class NotFoundError extends ClusterError {
  override name = 'NotFoundError';
}
