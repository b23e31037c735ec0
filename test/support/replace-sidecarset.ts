/** Editing a SidecarSet through the API as `kubectl edit` does, for tests on either backend. */
import { ApiException } from '@kubernetes/client-node';
import type { CustomObjectsApi } from '@kubernetes/client-node';

const SIDECARSETS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };

/** A SidecarSet's spec as read back: every field, and the containers the tests edit. */
export type SidecarSetSpecJson = Record<string, unknown> & { containers: { image: string }[] };

/**
 * Read, change the spec, replace; read again and retry (up to 5 times) when the controller wrote
 * the status in between and the API server answered 409.
 */
export async function replaceSidecarSet(
  custom: CustomObjectsApi,
  name: string,
  change: (spec: SidecarSetSpecJson) => void,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const current = (await custom.getClusterCustomObject({ ...SIDECARSETS, name })) as {
      spec: SidecarSetSpecJson;
    };
    change(current.spec);
    try {
      await custom.replaceClusterCustomObject({ ...SIDECARSETS, name, body: current });
      return;
    } catch (err) {
      if (!(err instanceof ApiException) || err.code !== 409 || attempt >= 5) throw err;
    }
  }
}
