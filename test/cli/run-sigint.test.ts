import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { startServer } from '../../src/server/index.ts';
import { cliWorkspace, killCli, readJson, spawnCli, withTimeout } from '../helpers/integration-cli.ts';

/**
 * Ctrl-C in the middle of `petstore-load run`: its verdict is how soon the child ends after the
 * signal, so it lives in a timing project (TIMING_LIGHT: one child, mostly waiting) where a busy
 * neighbour cannot stretch the 2 s it is allowed. Moved whole from test/cli/run.test.ts.
 */

/** The run itself, its setup seen, the interrupt and the exit, on a loaded machine. */
const TEST_TIMEOUT_MS = 90_000;
/** A short run (a few seconds of traffic, setup, teardown, two process starts) must end within this. */
const RUN_TIMEOUT_MS = 45_000;

const freshDir = cliWorkspace('run-sigint').fresh;

function readResult(outDir: string): RunResult {
  return readJson(join(outDir, 'result.json')) as RunResult;
}

describe('run: interrupted', () => {
  it(
    'SIGINT mid-run: exit 130 within 6 s (a 2 s teardown grace, a loaded machine), a partial result.json written, teardown run',
    () =>
      (async () => {
        const server = await startServer({ timeScale: 10 });
        const out = freshDir('sigint');
        const cli = spawnCli([
          'run',
          'mixed-traffic',
          '--base-url',
          server.url,
          '--api-key',
          'free-demo-key',
          '--time-scale',
          '10',
          '--duration',
          '30s',
          '--out',
          out,
        ]);
        try {
          const spawnedAt = Date.now();
          // Setup creates 'load-test pet 1..5'; once the last one is there, the workload is under way.
          const setupPets = () =>
            server.store
              .listPets({}, { limit: 1000, offset: 0 })
              .filter((p) => p.name.startsWith('load-test pet '));
          let exited = false;
          void cli.exited.then(() => {
            exited = true;
          });
          while (setupPets().length < 5) {
            if (exited || Date.now() - spawnedAt > RUN_TIMEOUT_MS)
              throw new Error(`no setup seen\nstdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          const setupAt = Date.now();
          await new Promise((resolve) => setTimeout(resolve, Math.max(1500, 4000 - (setupAt - spawnedAt))));
          expect(exited, 'still running when interrupted').toBe(false);
          process.kill(cli.child.pid as number, 'SIGINT');
          const interruptedAt = Date.now();
          const { code, signal } = await withTimeout(cli.exited, 20_000, 'exit after SIGINT');
          const context = `stdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`;
          expect({ code, signal }, context).toEqual({ code: 130, signal: null });
          // Well before the 30 s asked for: grace, teardown and the write fit in 2 s (slack for a loaded machine).
          expect(Date.now() - interruptedAt).toBeLessThan(6_000);
          expect(cli.stderr()).toBe('');
          expect(cli.stdout()).toContain('(PARTIAL: interrupted by SIGINT)');

          const written = readResult(out);
          expect(resultProblem(written)).toBeUndefined();
          expect(written.meta.partial).toBe(true);
          expect(written.meta.interruptedBy).toBe('SIGINT');
          expect(written.meta.durationSeconds).toBeLessThan(25);
          expect(written.overall.requests).toBeGreaterThan(0);
          expect(written.overall.statuses['200'] ?? 0).toBeGreaterThan(0);
          expect(written.workload.iterations).toBeGreaterThan(0);
          // Teardown ran after the interrupt, within what is left of the 2 s: quota allowing, the pets
          // setup created are gone; at least one of them is, whatever the quota.
          expect(setupPets().length).toBeLessThan(5);
        } finally {
          killCli(cli);
          await server.close();
        }
      })(),
    TEST_TIMEOUT_MS,
  );
});
