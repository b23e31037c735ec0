/**
 * The image as users build it (`npm run image`, scripts/image.ts): test/e2e/run.ts builds it once
 * for the run and hands it to the test files in E2E_IMAGE.
 */
import { spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

export interface BuiltImage {
  /** The image archive (OCI layout and docker archive in one tar). */
  readonly archive: string;
  readonly sbom: string;
  /** The name the archive gives the image: `sidecarset:<version>`. */
  readonly reference: string;
  /** The manifest's digest. */
  readonly digest: string;
}

/** `npm run image -- --out OUT ...args`, its printed lines parsed. */
export function buildImage(out: string, args: readonly string[] = []): Promise<BuiltImage> {
  const child = spawn('npm', ['run', '--silent', 'image', '--', '--out', out, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const field = (name: string): string =>
        new RegExp(`^${name}: +(\\S+)$`, 'm').exec(stdout)?.[1] ?? '';
      const image = {
        archive: field('archive'),
        sbom: field('sbom'),
        reference: field('image'),
        digest: field('digest'),
      };
      if (code === 0 && Object.values(image).every((v) => v !== '')) resolve(image);
      else reject(new Error(`npm run image failed (${String(code)}):\n${stdout}${stderr}`));
    });
  });
}

/** The image test/e2e/run.ts built for this run. */
export function runImage(env: NodeJS.ProcessEnv = process.env): BuiltImage {
  const text = env['E2E_IMAGE'];
  if (text === undefined) throw new Error('E2E_IMAGE is not set: run npm run test:e2e');
  return JSON.parse(text) as BuiltImage;
}
