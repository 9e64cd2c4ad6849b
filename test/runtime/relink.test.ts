import { describe, expect, it } from 'vitest';
import { relink } from '../../scripts/relink.mjs';

const dirs = {
  sourceDir: '/repo/scenarios',
  targetDir: '/repo/build/scenarios',
  src: '/repo/src',
  builtSrc: '/repo/build',
  scenarios: '/repo/scenarios',
  builtScenarios: '/repo/build/scenarios',
};

describe("a stripped scenario's imports, relinked to build/", () => {
  it('names build/ for src/, the stripped copy for a scenario module, the original for anything else', () => {
    const code = [
      'import { defineScenario } from "../src/scenario/define.ts";',
      'import * as flows from "./lib/flows.ts";',
      'import data from "./data/pets.json" with { type: "json" };',
      'import { shared } from "../tools/shared.ts";',
      'const later = await import("./lib/later.ts");',
      'import "node:crypto";',
    ].join('\n');
    expect(relink(code, dirs).split('\n')).toEqual([
      'import { defineScenario } from "../scenario/define.js";',
      'import * as flows from "./lib/flows.js";',
      'import data from "../../scenarios/data/pets.json" with { type: "json" };',
      'import { shared } from "../../tools/shared.ts";',
      'const later = await import("./lib/later.js");',
      'import "node:crypto";',
    ]);
  });
});
