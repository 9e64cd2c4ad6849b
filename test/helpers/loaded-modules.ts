import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliOutcome, REPO, runCli } from './integration-cli.ts';

const RECORDER = join(REPO, 'test', 'helpers', 'record-loads.mjs');

/** Whether this Node strips TypeScript's types itself (22.18 and later): then no tsx should load. */
export const NATIVE = Boolean((process.features as { typescript?: string | false }).typescript);

/**
 * A CLI command run with every module it (its threads, its children) loads recorded: the outcome,
 * the packages of node_modules among them (`@scope/name` or `name`), our own modules (`cli/main`,
 * from src/ or build/), which of src/ and build/ they came from, and every URL as recorded.
 */
export async function loadedBy(
  args: string[],
  ms = 30_000,
  env: Record<string, string> = {},
): Promise<
  CliOutcome & { packages: Set<string>; ours: Set<string>; from: Set<'src' | 'build'>; urls: string[] }
> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-load-modules-'));
  const file = join(dir, 'loaded.txt');
  try {
    // On the command line for the CLI and its worker threads (they inherit its execArgv), and in
    // NODE_OPTIONS for the children it starts (the embedded server); recorded twice is still once.
    const preload = `--import=${RECORDER}`;
    const outcome = await runCli(args, ms, { ...env, NODE_OPTIONS: preload, PETSTORE_LOADS: file }, [
      preload,
    ]);
    const urls = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const packages = new Set<string>();
    const ours = new Set<string>();
    const from = new Set<'src' | 'build'>();
    for (const url of urls) {
      const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
      if (name) packages.add(name);
      const own = new RegExp(`^file://${REPO}(src|build)/(.+)\\.[jt]s$`).exec(url);
      if (own) {
        from.add(own[1] as 'src' | 'build');
        ours.add(own[2] as string);
      }
    }
    return { ...outcome, packages, ours, from, urls };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
