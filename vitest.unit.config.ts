import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the inner loop for a change to pure code. The test files that start no
 * server, no child process and no listening socket, found by what they call (a new file that starts
 * one leaves the loop by itself); `npm test` stays the whole suite, which CI runs.
 */
const STARTS_SOMETHING =
  /\b(startServer|startNginx\w*|startRedis|startSentinelGroup|startExpress\w*|startFastify\w*|startPrometheus\w*|runCli|cliInProcess|runInProcess|runListAgainst|executeScenario|spawn|spawnSync|fork|execFile|createServer|listen|hostileTarget|Worker|freePort|tsImport|realRun|tenantResult|makeCertificates|startTlsFront|startHttpProxy)\b|helpers\/(integration|limiters|redis|prometheus|processes|hostile-target|real-run|tls-target|http-proxy|nginx)/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

export const unit = testFiles('test').filter((file) => !STARTS_SOMETHING.test(readFileSync(file, 'utf8')));

export default defineConfig({
  // A scenario's `import 'petstore-load'` reads the public module's source here, as tsconfig's paths do.
  resolve: { alias: { 'petstore-load': fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  test: {
    include: unit,
    testTimeout: 30_000,
    // These files share a thread's module graph (17 s instead of 53 s, most of it imports): none
    // starts anything, and a file must leave the globals as it found them, which a run with
    // `--sequence.shuffle.files` checks (a spy taken on a faked setTimeout once left the fake behind).
    pool: 'threads',
    isolate: false,
    maxWorkers: 2,
  },
});
