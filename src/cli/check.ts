/**
 * `sidecarset check`: is the installation healthy? (like `linkerd check`, `istioctl
 * verify-install`). `--pre`: before migrating from OpenKruise, what will not carry over
 * (docs/migrating-from-openkruise.md). One line per check, ✓ / ! / ✗, and for a warning or a failure what to do. Exit 1
 * when a check failed, 0 otherwise (warnings allowed). Reads only; the verdicts are the core's
 * (core/diagnosis/installation-check.ts).
 */
import type { InstallationCheck } from '../core/diagnosis/installation-check.js';
import { checkInstallation, passed } from '../core/diagnosis/installation-check.js';
import { preflightMigration } from '../core/diagnosis/migration-preflight.js';
import type { ClusterFlags } from '../k8s/cli-client.js';
import { cliKubeConfig, createCliClient } from '../k8s/cli-client.js';
import { readInstallation } from '../k8s/installation-reader.js';
import { readMigrationInput } from '../k8s/migration-reader.js';
import type { DataFormat } from './format.js';
import { renderData } from './format.js';
import type { Io } from './io.js';

export interface CheckOptions extends ClusterFlags {
  /** Where the Deployment and the controller's Lease are. */
  namespace: string;
  output: 'table' | DataFormat;
  /** Before migrating from OpenKruise: what will not carry over (migration-preflight.ts). */
  pre?: boolean;
}

/** A SidecarSet may lag its spec this long after an update before it is a warning. */
const SETTLE_MS = 2000;
/** How long a webhook served at a URL has to answer GET /readyz. */
const PROBE_TIMEOUT_MS = 2000;

const MARKS = { ok: '✓', warning: '!', failed: '✗' } as const;

export async function runCheck(options: CheckOptions, io: Io, now: () => Date): Promise<number> {
  const kubeConfig = cliKubeConfig(options);
  const client = createCliClient(kubeConfig);
  const checks =
    options.pre === true
      ? preflightMigration(await readMigrationInput(kubeConfig, client))
      : checkInstallation(
          await readInstallation(kubeConfig, client, {
            namespace: options.namespace,
            settleMs: SETTLE_MS,
            probeTimeoutMs: PROBE_TIMEOUT_MS,
          }),
          now(),
        );
  const ok = passed(checks);
  const subject = options.pre === true ? 'migration from OpenKruise' : 'installation';
  io.stdout.write(
    options.output === 'table'
      ? renderTable(checks, ok, subject)
      : renderData({ passed: ok, checks }, options.output),
  );
  return ok ? 0 : 1;
}

function renderTable(checks: readonly InstallationCheck[], ok: boolean, subject: string): string {
  const lines = checks.flatMap((c) => [
    `${MARKS[c.state]} ${c.name}: ${c.message}`,
    ...(c.fix === undefined ? [] : [`    ${c.fix}`]),
  ]);
  const failed = checks.filter((c) => c.state === 'failed').length;
  const warnings = checks.filter((c) => c.state === 'warning').length;
  lines.push(
    '',
    ok
      ? `${subject} OK (${warnings} warning${warnings === 1 ? '' : 's'})`
      : `${subject} NOT OK: ${failed} check${failed === 1 ? '' : 's'} failed, ${warnings} warning${warnings === 1 ? '' : 's'}`,
  );
  return `${lines.join('\n')}\n`;
}
