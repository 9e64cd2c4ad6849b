import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import type { OpenApiDocument } from '../../src/api/openapi-document.ts';
import { loadSpec } from '../../src/api/spec.ts';
import {
  firstOperations,
  firstScenarioText,
  runCommand,
  serverUrl,
  shellWord,
} from '../../src/codegen/first-scenario.ts';

const BOOKINGS = join(import.meta.dirname, '..', 'fixtures', 'openapi', 'bookings.yaml');

/** What `init` writes of a document: which operations a first scenario calls, with what, and the command it prints. */
describe('a first scenario', () => {
  it("calls our document's first two GETs that need no parameter", async () => {
    const ours = await loadSpec();
    expect(firstOperations(ours).map((op) => op.id)).toEqual(['listPets', 'listCategories']);
    const text = firstScenarioText(ours, {
      name: 'first',
      command: 'npx petstore-load run load/first.ts',
      typesCommand: 'npx petstore-load types --out load/api-types.ts',
      typesModule: './api-types.ts',
    });
    expect(text).toContain("import type { Api } from './api-types.ts';");
    expect(text).toContain("const first = await api.call('listPets');");
    expect(text).toContain("await api.call('listCategories');");
    expect(text).not.toContain('placeholders');
    expect(text).toContain(' * Run it:   npx petstore-load run load/first.ts\n');
  });

  it("fills a required parameter from the document's example, and skips operations without an operationId", async () => {
    const spec = await loadSpec(BOOKINGS);
    // GET /health has no operationId; getRoom and getBooking need a path parameter: getRoom comes first.
    expect(firstOperations(spec).map((op) => op.id)).toEqual(['listRooms', 'getRoom']);
    const text = firstScenarioText(spec, {
      name: 'rooms',
      command: 'x',
      typesCommand: 'y',
      typesModule: './t.ts',
    });
    expect(text).toContain("await api.call('getRoom', { path: { roomId: 101 } });");
    expect(text).toContain('placeholders from the document');
    expect(text).toContain("name: 'rooms',");
  });

  it("runs against the document's first server, with the key its operations need", async () => {
    const spec = await loadSpec(BOOKINGS);
    expect(runCommand('load/rooms.ts', 'api spec.yaml', spec)).toEqual({
      command:
        "PETSTORE_API_KEY=<your key> npx petstore-load run load/rooms.ts --spec 'api spec.yaml' --base-url https://eu.bookings.example.test/v1",
      note: undefined,
    });
    // Without --spec: our document, against the embedded server.
    expect(runCommand('load/first.ts', undefined, await loadSpec()).command).toBe(
      'npx petstore-load run load/first.ts',
    );
  });

  it('puts a relative or missing server on localhost, and says so', () => {
    const doc = (servers?: OpenApiDocument['servers']) => ({ servers }) as OpenApiDocument;
    expect(serverUrl(doc([{ url: '/v2/' }]))).toEqual({ url: 'http://localhost:8080/v2', guessed: true });
    expect(serverUrl(doc())).toEqual({ url: 'http://localhost:8080', guessed: true });
    expect(serverUrl(doc([{ url: 'http://api.test:9000/' }]))).toEqual({
      url: 'http://api.test:9000',
      guessed: false,
    });
    expect(shellWord("it's")).toBe("'it'\\''s'");
  });

  it('refuses a document with no GET operation named by an operationId, in one line', async () => {
    const spec = await loadSpec(BOOKINGS);
    const noGets = {
      ...spec,
      operations: spec.operations.filter((op) => op.method !== 'GET' || op.id.startsWith('GET ')),
    };
    expect(() => firstOperations(noGets)).toThrow(InputError);
    expect(() => firstOperations(noGets)).toThrow(/no GET operation with an operationId/);
  });
});
