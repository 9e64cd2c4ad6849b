import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../src/scenario/v8-heap.ts', import.meta.url));

describe('keepRequestObjectsYoung', () => {
  it("sets a flag this Node's V8 knows: an unknown one would print 'unrecognized flag' on every run", () => {
    // In a process of its own: a V8 flag is process-wide, and the test runner's must stay as it is.
    const out = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(MODULE)}); m.keepRequestObjectsYoung(); m.keepRequestObjectsYoung(); console.log('set');`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe('set');
    expect(out.stderr).toBe('');
  });
});
