/**
 * What a node changes on the host, and how it is put back: its own cgroup root (made in every
 * cgroup v1 hierarchy before the kubelet starts; runc also makes the same tree in the unified
 * hierarchy of a hybrid host), and processes that outlive containerd (its shims, which daemonize,
 * and the containers below them). Everything else the node touches stays in its scratch folder or
 * in its private mount namespace, which vanishes with its last process.
 */
import { readdir, readFile, rmdir, statfs, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const CGROUP_FS = '/sys/fs/cgroup';
const CGROUP_V1_MAGIC = 0x27e0eb;
const CGROUP_V2_MAGIC = 0x63677270;

interface Hierarchies {
  /** One folder per mounted v1 hierarchy (cpu, memory, pids, name=systemd…). */
  readonly v1: readonly string[];
  /** The v2 hierarchy: /sys/fs/cgroup/unified on a hybrid host. */
  readonly unified: string | undefined;
}

async function hierarchies(): Promise<Hierarchies> {
  if ((await statfs(CGROUP_FS)).type === CGROUP_V2_MAGIC) return { v1: [], unified: CGROUP_FS };
  const v1: string[] = [];
  let unified: string | undefined;
  for (const entry of await readdir(CGROUP_FS, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(CGROUP_FS, entry.name);
    const type = (await statfs(path)).type;
    if (type === CGROUP_V1_MAGIC) v1.push(path);
    else if (type === CGROUP_V2_MAGIC) unified = path;
  }
  return { v1, unified };
}

/**
 * Makes `/name` in every v1 hierarchy, for the kubelet's `cgroupRoot`: the pods' cgroups go below
 * it, where the node's teardown finds them. A cpuset cgroup starts with no CPUs: it gets its
 * parent's.
 */
export async function createCgroupRoot(name: string): Promise<void> {
  const { v1 } = await hierarchies();
  if (v1.length === 0) {
    throw new Error(
      'this host has only cgroup v2: the node fixture supports cgroup v1 and hybrid hosts ' +
        '(the machines it is tested on); see test/node-fixture/README.md',
    );
  }
  for (const hierarchy of v1) {
    const dir = join(hierarchy, name);
    await mkdir(dir, { recursive: true });
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      const parent = await readFile(join(hierarchy, file), 'utf8').catch(() => undefined);
      if (parent !== undefined) await writeFile(join(dir, file), parent);
    }
  }
}

/** Every folder of the tree at `root`, deepest first. */
async function treeDeepestFirst(root: string): Promise<string[]> {
  const children = await readdir(root, { withFileTypes: true }).catch(() => []);
  const below: string[] = [];
  for (const child of children) {
    if (child.isDirectory()) below.push(...(await treeDeepestFirst(join(root, child.name))));
  }
  return [...below, root];
}

async function cgroupRootFolders(name: string): Promise<string[]> {
  const { v1, unified } = await hierarchies();
  const roots = [...v1, ...(unified === undefined ? [] : [unified])].map((h) => join(h, name));
  const folders: string[] = [];
  for (const root of roots) folders.push(...(await treeDeepestFirst(root)));
  return folders;
}

async function pidsIn(folders: readonly string[]): Promise<number[]> {
  const pids = new Set<number>();
  for (const folder of folders) {
    const text = await readFile(join(folder, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const line of text.split('\n')) if (line !== '') pids.add(Number(line));
  }
  return [...pids];
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Kills whatever still runs in the cgroup root (containers whose shim is gone) and removes it,
 * deepest folder first, retrying while the killed processes exit. Throws if it cannot.
 */
export async function removeCgroupRoot(name: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const folders = await cgroupRootFolders(name);
    if (folders.length === 0) return;
    for (const pid of await pidsIn(folders)) kill(pid);
    let left = 0;
    for (const folder of folders) {
      await rmdir(folder).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') left++;
      });
    }
    if (left === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`cgroup ${name}: ${left} folders left (processes that will not exit?)`);
    }
    await sleep(100);
  }
}

/** The names of the cgroup roots made by createCgroupRoot with `prefix`, in any hierarchy. */
export async function cgroupRootsNamed(prefix: string): Promise<string[]> {
  const { v1, unified } = await hierarchies();
  const names = new Set<string>();
  for (const hierarchy of [...v1, ...(unified === undefined ? [] : [unified])]) {
    for (const entry of await readdir(hierarchy, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name.startsWith(prefix)) names.add(entry.name);
    }
  }
  return [...names];
}

/**
 * Kills every process whose command line mentions `dir` (the node's scratch folder): containerd's
 * shims name their socket there and outlive containerd.
 */
export async function killProcessesMentioning(dir: string): Promise<void> {
  const needle = `${dir}/`;
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').some((arg) => arg.startsWith(needle))) kill(pid);
  }
}
