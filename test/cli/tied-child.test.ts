import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { withTimeout } from '../helpers/integration-cli.ts';
import { endsWithin, processEnded } from '../helpers/processes.ts';

/**
 * Every child the toolkit starts dies with its parent, even a parent killed by SIGKILL, which runs
 * no handler: the child watches its IPC channel (src/cli/tied-child.ts). Here the reference server,
 * started as `run`, `capacity` and `bench` start it, outlives a SIGKILLed parent by at most 2 s,
 * where a plain spawn of the same server (the control) is still serving.
 */

const PARENT = fileURLToPath(new URL('../helpers/tied-parent.ts', import.meta.url));
const started: ChildProcess[] = [];
const strays: number[] = [];

afterEach(() => {
  for (const p of started.splice(0)) p.kill('SIGKILL');
  for (const pid of strays.splice(0))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already, as it should be.
    }
});

/** The fixture parent in `mode`, and what it prints. */
function parent(mode: string): { proc: ChildProcess; line: () => Promise<string> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', PARENT, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let out = '';
  let err = '';
  proc.stderr?.on('data', (chunk) => {
    err += chunk;
  });
  const line = new Promise<string>((resolve, reject) => {
    proc.stdout?.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.split('\n')[0] as string);
    });
    proc.once('exit', (code) => reject(new Error(`the parent exited ${code} first: ${err}`)));
  });
  return { proc, line: () => withTimeout(line, 30_000, `the ${mode} parent's first line`) };
}

async function childOf(mode: 'tied' | 'untied'): Promise<{ proc: ChildProcess; child: number }> {
  const p = parent(mode);
  const child = Number(/^child (\d+)$/.exec(await p.line())?.[1]);
  expect(child).toBeGreaterThan(0);
  strays.push(child);
  return { proc: p.proc, child };
}

describe('a child tied to its parent', () => {
  it('the embedded server ends within 2 s of its parent being SIGKILLed', async () => {
    const { proc, child } = await childOf('tied');
    expect(processEnded(child)).toBe(false);
    proc.kill('SIGKILL');
    const ms = await endsWithin(child, 2_000);
    expect(ms, 'the server outlived its parent by more than 2 s').toBeDefined();
  }, 40_000);

  it('the control: the same server spawned plainly outlives its SIGKILLed parent', async () => {
    const { proc, child } = await childOf('untied');
    proc.kill('SIGKILL');
    expect(await endsWithin(child, 2_000)).toBeUndefined();
  }, 40_000);

  it('a tied child with nothing left to do ends by itself, its parent still alive', async () => {
    const p = parent('idle');
    expect(await p.line()).toBe('idle child exited 0');
  }, 40_000);
});
