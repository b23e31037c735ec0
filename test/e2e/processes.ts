/**
 * This project's processes as a user starts them: `node bin/sidecarset.js serve|controller ...`,
 * flags from the command line, JSON logs on stdout.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

import { diesWithParent } from '../kube-fixture/control-plane.js';

const root = new URL('../../', import.meta.url).pathname;

export interface LogEntry {
  readonly level?: number;
  readonly msg?: string;
  readonly [key: string]: unknown;
}

export interface SidecarsetProcess {
  /** The webhook's https://127.0.0.1:PORT (serve only). */
  readonly url: string;
  readonly logs: readonly LogEntry[];
  /** Everything written on stderr. */
  stderr(): string;
  /** Resolves with the first log entry that `match` accepts. */
  waitForLog(
    match: (entry: LogEntry) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<LogEntry>;
  /** SIGTERM (a graceful stop) or SIGKILL (a crash); resolves with the exit code once it exited. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<number | null>;
  /** SIGSTOP freezes the process (a long GC pause, a node that stalls), SIGCONT thaws it. */
  freeze(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

const PINO_ERROR = 50;

/** Its stderr and last log lines: what an assertion about the process should show when it fails. */
export function lastWords(process: SidecarsetProcess, lines = 40): string {
  const log = process.logs.slice(-lines).map((e) => JSON.stringify(e));
  return `stderr:\n${process.stderr()}\nlast log lines:\n${log.join('\n')}`;
}

/** Log entries at error level or above. */
export function errors(process: SidecarsetProcess): LogEntry[] {
  return process.logs.filter((e) => (e.level ?? 0) >= PINO_ERROR);
}

/**
 * Starts `sidecarset <args>`; for `serve`, resolves once the webhook listens. The child gets the
 * parent-death signal: a test process that dies takes it along.
 */
export async function startSidecarset(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<SidecarsetProcess> {
  const [command, argv] = diesWithParent(process.execPath, ['bin/sidecarset.js', ...args]);
  const child: ChildProcess = spawn(command, argv, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogEntry[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => {
      exitCode = code;
      for (const wake of waiters) wake();
      resolve(code);
    });
  });
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  if (child.stdout === null) throw new Error('no stdout');
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as LogEntry);
    } catch {
      logs.push({ msg: line });
    }
    if (process.env['TEST_LOG_LEVEL'] !== undefined) process.stderr.write(`${line}\n`);
    for (const wake of waiters) wake();
  });

  const waitForLog = (
    match: (entry: LogEntry) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<LogEntry> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = logs.find(match);
        if (found !== undefined) {
          done();
          resolve(found);
        } else if (exitCode !== undefined) {
          done();
          reject(new Error(`sidecarset exited (${String(exitCode)}) before ${what}:\n${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  let url = '';
  if (args[0] === 'serve') {
    const listening = await waitForLog((e) => e.msg === 'webhook listening', 'webhook listening');
    url = String(listening['url']);
  }
  return {
    url,
    logs,
    stderr: () => stderr,
    waitForLog,
    async stop(signal = 'SIGTERM') {
      if (exitCode === undefined) child.kill(signal);
      return exited;
    },
    freeze(signal) {
      if (exitCode === undefined) child.kill(signal);
    },
  };
}

export interface ProcessRun {
  readonly code: number | null;
  /** stdout and stderr, interleaved as they came. */
  readonly out: string;
}

/** Runs a command to its end in the repository's folder, with `env` added to ours. */
export function runProcess(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ProcessRun> {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      resolve({ code, out });
    }),
  );
}
