import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentDigest } from '../../bin/source-stamp.js';
import { builtScenario } from '../../src/scenario/built-scenario.ts';

let root: string;
let scenarios: string;
let built: string;

/** Writes a source and notes it in the manifest as the build would. */
function shipped(files: Record<string, string>): void {
  const manifest: Record<string, string> = {};
  for (const [name, text] of Object.entries(files)) {
    const path = join(scenarios, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    manifest[name] = contentDigest(path);
  }
  writeFileSync(join(built, 'manifest.json'), JSON.stringify(manifest));
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'petstore-load-built-'));
  scenarios = join(root, 'scenarios');
  built = join(root, 'build', 'scenarios');
  mkdirSync(built, { recursive: true });
  shipped({ 'browse.ts': 'export default 1;\n', 'lib/flows.ts': 'export const a = 1;\n' });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('a shipped scenario runs from its build while its sources are unchanged', () => {
  it('names the stripped copy of a scenario the build saw', () => {
    expect(builtScenario(join(scenarios, 'browse.ts'), scenarios, built)).toBe(
      pathToFileURL(join(built, 'browse.js')).href,
    );
  });

  it('has no copy of a scenario added since, nor of a file outside scenarios/', () => {
    writeFileSync(join(scenarios, 'mine.ts'), 'export default 2;\n');
    expect(builtScenario(join(scenarios, 'mine.ts'), scenarios, built)).toBeUndefined();
    expect(builtScenario(join(root, 'elsewhere.ts'), scenarios, built)).toBeUndefined();
    // The scenario added beside them does not send the shipped ones back to their sources.
    expect(builtScenario(join(scenarios, 'browse.ts'), scenarios, built)).toBeDefined();
  });

  it('sends every scenario back to its sources once any source it was made from changed', () => {
    // Same size: an edit that kept the length.
    writeFileSync(join(scenarios, 'lib', 'flows.ts'), 'export const b = 1;\n');
    expect(builtScenario(join(scenarios, 'browse.ts'), scenarios, built)).toBeUndefined();
  });

  it("keeps the copies while only the sources' times changed (a checkout, npm's tarball: 1985-10-26)", () => {
    const npmTime = new Date('1985-10-26T08:15:00Z');
    utimesSync(join(scenarios, 'lib', 'flows.ts'), npmTime, npmTime);
    utimesSync(join(scenarios, 'browse.ts'), npmTime, npmTime);
    expect(builtScenario(join(scenarios, 'browse.ts'), scenarios, built)).toBe(
      pathToFileURL(join(built, 'browse.js')).href,
    );
  });

  it('uses no copy when a source was removed, the manifest is missing, or nothing was built', () => {
    rmSync(join(scenarios, 'lib', 'flows.ts'));
    expect(builtScenario(join(scenarios, 'browse.ts'), scenarios, built)).toBeUndefined();
    shipped({ 'browse.ts': 'export default 1;\n' });
    rmSync(join(built, 'manifest.json'));
    expect(builtScenario(join(scenarios, 'browse.ts'), scenarios, built)).toBeUndefined();
    expect(builtScenario(join(scenarios, 'browse.ts'), scenarios, undefined)).toBeUndefined();
  });
});
