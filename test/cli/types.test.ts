import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/api/spec.ts';
import { SCENARIO_TSCONFIG } from '../../src/cli/init.ts';
import { firstScenarioText } from '../../src/codegen/first-scenario.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { type CliOutcome, cliWorkspace, outcomeContext, REPO } from '../helpers/integration-cli.ts';

/**
 * `petstore-load types` on a document of a user's (test/fixtures/openapi/bookings.yaml), and what
 * its declarations catch: scenarios compiled as a user's `tsc` would (init's tsconfig, strict, with
 * and without exactOptionalPropertyTypes), one program for all of them. A good file compiles clean;
 * in the bad one each line marked `// TSnnnn` fails with that error and no other line does.
 */

const FIXTURE = 'test/fixtures/openapi/bookings.yaml';
const TIMEOUT_MS = 60_000;
const freshDir = cliWorkspace('types').fresh;

const GOOD = `import { defineScenario } from 'petstore-load';
import type { Api } from './api-types.ts';

export default defineScenario({
  name: 'book',
  workload: { executor: 'constant-vus', vus: 1, duration: '1s' },
  setup: async (api: Api) => {
    const rooms = await api.call('listRooms', { query: { limit: 5 } });
    return { roomIds: rooms.status === 200 ? rooms.body.map((room) => room.number) : [] };
  },
  flows: [
    {
      name: 'book',
      run: async (api, ctx) => {
        const roomId = ctx.pick(ctx.data.roomIds);
        const made = await api.call('createBooking', {
          headers: { 'Idempotency-Key': '00000000-0000-0000-0000-000000000000', 'X-Trace': 'a' },
          body: { roomId, nights: 2, guest: { name: 'Ada' } },
          retry: false,
        });
        if (made.status === 201) {
          const id: string = made.body.id;
          const got = await api.call('getBooking', { path: { bookingId: id } });
          if (got.ok) console.log(got.body.status, got.body.guest.name);
          if (got.status === 404) console.log(got.body.title);
          const gone = await api.call('cancelBooking', { path: { bookingId: id } });
          if (gone.status === 204) console.log(gone.body === undefined);
        } else if (made.status === 0) {
          console.log(made.error.length);
        }
        await api.call('listRooms');
      },
    },
  ],
});
`;

const BAD = `import { defineScenario } from 'petstore-load';
import type { Api } from './api-types.ts';

export default defineScenario({
  name: 'bad',
  workload: { executor: 'constant-vus', vus: 1, duration: '1s' },
  flows: [
    {
      name: 'bad',
      run: async (api: Api) => {
        await api.call('listRoom'); // TS2345
        const guest = { name: 'Ada' };
        const headers = { 'Idempotency-Key': 'k' };
        await api.call('createBooking', { headers, body: { roomId: 1, nights: 2, guest, pets: 1 } }); // TS2353
        await api.call('createBooking', { headers, body: { roomId: 1, guest } }); // TS2741
        await api.call('createBooking', { body: { roomId: 1, nights: 2, guest } }); // TS2345
        await api.call('getRoom'); // TS2554
        await api.call('getRoom', { path: { roomId: '101' } }); // TS2322
        await api.call('listRooms', { query: { limit: 5, sort: 'floor' } }); // TS2353
        await api.call('listRooms', { body: {} }); // TS2322
        const room = await api.call('getRoom', { path: { roomId: 101 } });
        if (room.status === 200) console.log(room.body.title); // TS2339
        if (room.status === 418) console.log('a teapot'); // TS2367
      },
    },
  ],
});
`;

/** Each file's errors as `line TSnnnn`, for one program over `files` with `exactOptional` set as asked. */
function compile(dir: string, files: string[], exactOptional: boolean, old?: ts.Program) {
  const parsed = ts.parseJsonConfigFileContent(JSON.parse(SCENARIO_TSCONFIG), ts.sys, dir);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    exactOptionalPropertyTypes: exactOptional,
    // `petstore-load` as this repository's source: what build/index.d.ts is made from.
    paths: { 'petstore-load': [join(REPO, 'src', 'index.ts')] },
    types: ['node'],
    typeRoots: [join(REPO, 'node_modules', '@types')],
  };
  const program = ts.createProgram(
    files.map((f) => join(dir, f)),
    options,
    undefined,
    old,
  );
  const errors: Record<string, string[]> = {};
  for (const file of files) {
    const source = program.getSourceFile(join(dir, file));
    if (!source) throw new Error(`${file} is not in the program`);
    errors[file] = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ].map(
      (d) =>
        `${source.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ').slice(0, 160)}`,
    );
  }
  return { program, errors };
}

/** The `line TSnnnn` a file's marks expect. */
function marked(text: string): string[] {
  return text.split('\n').flatMap((line, i) => {
    const code = /\/\/ (TS\d+)$/.exec(line)?.[1];
    return code ? [`${i + 1} ${code}`] : [];
  });
}

let dir: string;
let generated: CliOutcome;

beforeAll(async () => {
  dir = freshDir('user');
  generated = await cliInProcess(['types', '--spec', FIXTURE, '--out', join(dir, 'api-types.ts')]);
}, TIMEOUT_MS);

describe('petstore-load types', () => {
  it('writes the declarations of a document, its header saying how to write them again', () => {
    expect(generated.code, outcomeContext(generated)).toBe(0);
    expect(generated.stdout).toContain(
      `types of 5 operations written to ${join(dir, 'api-types.ts')} (1 without an operationId left out`,
    );
    const text = readFileSync(join(dir, 'api-types.ts'), 'utf8');
    expect(text.split('\n').slice(0, 3)).toEqual([
      expect.stringMatching(
        new RegExp(`^// Generated from ${FIXTURE} \\(openapi-typescript 7\\.\\d+\\.\\d+\\) by:$`),
      ),
      `//   petstore-load types --spec ${FIXTURE} --out ${join(dir, 'api-types.ts')}`,
      '// Do not edit: run that command again when the document changes.',
    ]);
    expect(text).toContain("import type { TypedApi } from 'petstore-load';");
    expect(text).toMatch(/^export interface operations \{$/m);
    expect(text.trimEnd().split('\n').at(-1)).toBe('export type Api = TypedApi<operations>;');
  });

  it(
    "types api.call by the document: a good scenario and init's first one compile, each wrong call of a bad one fails",
    async () => {
      writeFileSync(join(dir, 'good.ts'), GOOD);
      writeFileSync(join(dir, 'bad.ts'), BAD);
      const spec = await loadSpec(join(REPO, FIXTURE));
      writeFileSync(
        join(dir, 'first.ts'),
        firstScenarioText(spec, {
          name: 'first',
          command: 'x',
          typesCommand: 'y',
          typesModule: './api-types.ts',
        }),
      );
      const files = ['good.ts', 'bad.ts', 'first.ts'];
      const strictest = compile(dir, files, true);
      const ours = compile(dir, files, false, strictest.program);
      for (const { errors } of [strictest, ours]) {
        expect(errors['good.ts']).toEqual([]);
        expect(errors['first.ts']).toEqual([]);
        expect(errors['bad.ts']?.map((e) => e.replace(/:.*/, ''))).toEqual(marked(BAD));
      }
      // The misspelt id is told with the ids there are.
      expect(strictest.errors['bad.ts']?.[0]).toContain(
        `'"listRoom"' is not assignable to parameter of type '"listRooms" |`,
      );
    },
    TIMEOUT_MS,
  );

  it('prints the declarations without --out, and leaves out the Api line with --no-api-type', async () => {
    const out = await cliInProcess(['types', '--spec', FIXTURE, '--no-api-type']);
    expect(out.code, outcomeContext(out)).toBe(0);
    expect(out.stdout).toMatch(/^\/\/ Generated from /);
    expect(out.stdout).toContain(`//   petstore-load types --spec ${FIXTURE} --no-api-type\n`);
    expect(out.stdout).not.toContain("petstore-load';");
    expect(out.stdout).not.toContain('export type Api');
  });

  it('refuses a document it cannot read and an --out that is not TypeScript, in one line, exit 2', async () => {
    const missing = await cliInProcess(['types', '--spec', join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^petstore-load: spec .*nope\.yaml: .*ENOENT.*\n$/);
    const notTs = await cliInProcess(['types', '--out', join(dir, 'types.txt')]);
    expect(notTs.code).toBe(2);
    expect(notTs.stderr).toBe(
      `petstore-load: --out must name a TypeScript file (.ts), got '${join(dir, 'types.txt')}'\n`,
    );
  });
});
