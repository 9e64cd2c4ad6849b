import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import { responseFormatsNotChecked } from '../../src/api/schema-formats.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import { responseSchemaCheck } from '../../src/record/checks/schema-check.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { syntheticResult } from '../helpers/synthetic-result.ts';
import { makeAttempt, makeContext } from '../helpers/unit-attempt.ts';

const FIXTURES = 'test/fixtures/openapi';

const byId = (operations: Operation[]) => new Map(operations.map((op) => [op.id, op]));

/** Everything written to the console or stderr while `run` runs (ajv warns through console.warn). */
let printed: MockInstance[];
beforeEach(() => {
  printed = [
    vi.spyOn(console, 'warn').mockImplementation(() => {}),
    vi.spyOn(console, 'error').mockImplementation(() => {}),
    vi.spyOn(console, 'log').mockImplementation(() => {}),
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
  ];
});
afterEach(() => vi.restoreAllMocks());
const printedCalls = () => printed.reduce((n, spy) => n + spy.mock.calls.length, 0);

describe('a --spec in OpenAPI 3.1', () => {
  it('loads its operations, leaves webhooks out, and reads its schemas as JSON Schema 2020-12', async () => {
    const { document, operations } = await loadSpec(`${FIXTURES}/parcels-3.1.yaml`);
    expect(document.openapi).toBe('3.1.0');
    // The webhook (parcelDelivered) is a request the API sends, not one a load test makes.
    expect(operations.map((op) => [op.id, op.method, op.path])).toEqual([
      ['getParcel', 'GET', '/parcels/{parcelId}'],
    ]);
    expect(operations[0]?.schemaDialect).toBe('json-schema-2020-12');
    expect(JSON.stringify(document)).not.toContain('$ref');
  });

  it('validates a body by 2020-12: a null its type array allows passes, a wrong const or a null it does not allow fails', async () => {
    const getParcel = byId((await loadSpec(`${FIXTURES}/parcels-3.1.yaml`)).operations).get('getParcel');
    if (!getParcel) throw new Error('no getParcel');
    const check = responseSchemaCheck();
    const parcel = { id: 'p-1', kind: 'parcel', note: null, destination: 'DE' };
    expect(check.evaluate(makeContext(makeAttempt(getParcel, { json: parcel })))).toBeUndefined();
    expect(
      check.evaluate(makeContext(makeAttempt(getParcel, { json: { ...parcel, note: 'fragile' } }))),
    ).toBe(undefined);
    expect(
      check.evaluate(makeContext(makeAttempt(getParcel, { json: { ...parcel, kind: 'letter' } }))),
    ).toMatch(/^body\/kind must be equal to constant/);
    expect(check.evaluate(makeContext(makeAttempt(getParcel, { json: { ...parcel, id: null } })))).toMatch(
      /^body\/id must be string/,
    );
    // 2020-12's own keywords, which draft-07 (and OpenAPI 3.0's dialect) would ignore or read otherwise:
    // a tuple by prefixItems (draft-07's `items: false` would refuse any item), unevaluatedProperties.
    expect(
      check.evaluate(makeContext(makeAttempt(getParcel, { json: { ...parcel, tracking: ['DHL', 42] } }))),
    ).toBeUndefined();
    expect(
      check.evaluate(
        makeContext(makeAttempt(getParcel, { json: { ...parcel, tracking: ['DHL', 42, 'x'] } })),
      ),
    ).toMatch(/^body\/tracking must NOT have more than 2 items/);
    expect(
      check.evaluate(makeContext(makeAttempt(getParcel, { json: { ...parcel, colour: 'red' } }))),
    ).toMatch(/^body must NOT have unevaluated properties/);
    // exclusiveMinimum is a number in 2020-12 (a boolean in OpenAPI 3.0's dialect).
    expect(check.evaluate(makeContext(makeAttempt(getParcel, { json: { ...parcel, weightKg: 0 } })))).toMatch(
      /^body\/weightKg must be > 0/,
    );
  });

  it('lists a format no validator knows once, checks the rest of the body, and prints nothing', async () => {
    const { operations } = await loadSpec(`${FIXTURES}/parcels-3.1.yaml`);
    expect(responseFormatsNotChecked(operations)).toEqual({ formatsNotChecked: ['iso-country-code'] });
    const getParcel = byId(operations).get('getParcel') as Operation;
    const check = responseSchemaCheck();
    // Any string passes the unknown format; the type beside it still holds.
    for (const destination of ['DE', 'not a country'])
      expect(
        check.evaluate(
          makeContext(makeAttempt(getParcel, { json: { id: 'p', kind: 'parcel', note: null, destination } })),
        ),
      ).toBeUndefined();
    expect(
      check.evaluate(
        makeContext(
          makeAttempt(getParcel, { json: { id: 'p', kind: 'parcel', note: null, destination: 49 } }),
        ),
      ),
    ).toMatch(/^body\/destination must be string/);
    // A second run's check (a fresh validator) compiles the schema again, silently too.
    expect(
      responseSchemaCheck().evaluate(
        makeContext(
          makeAttempt(getParcel, { json: { id: 'p', kind: 'parcel', note: null, destination: 'FR' } }),
        ),
      ),
    ).toBeUndefined();
    expect(printedCalls()).toBe(0);
  });

  it('names the unchecked formats in the result (as its schema allows), in one line of the summary and in the report', async () => {
    const result = await syntheticResult([]);
    result.config.formatsNotChecked = ['iso-country-code'];
    expect(resultProblem(JSON.parse(JSON.stringify(result)))).toBeUndefined();
    const lines = formatSummary(result, undefined).split('\n');
    expect(lines.filter((line) => line.includes('iso-country-code'))).toEqual([
      'formats not checked: iso-country-code',
    ]);
    expect(renderHtmlReport(result)).toContain('<dt>formats not checked</dt><dd>iso-country-code</dd>');
    delete result.config.formatsNotChecked;
    expect(formatSummary(result, undefined)).not.toContain('formats not checked');
    result.config.formatsNotChecked = [];
    expect(resultProblem(JSON.parse(JSON.stringify(result)))).toMatch(/formatsNotChecked/);
  });
});

describe('a --spec in OpenAPI 3.2', () => {
  it('loads the QUERY method, tags with kind and parent, and skips additionalOperations without failing', async () => {
    const { document, operations } = await loadSpec(`${FIXTURES}/parcels-3.2.yaml`);
    expect(document.openapi).toBe('3.2.0');
    // SUBSCRIBE and LOCK (additionalOperations) are not in the table; the rest of the path is.
    expect(operations.map((op) => [op.id, op.method, op.path])).toEqual([
      ['listParcels', 'GET', '/parcels'],
      ['searchParcels', 'QUERY', '/parcels'],
      ['getParcel', 'GET', '/parcels/{parcelId}'],
    ]);
    expect(byId(operations).get('searchParcels')?.requestBody).toMatchObject({
      required: true,
      contentType: 'application/json',
    });
    expect(operations.every((op) => op.schemaDialect === 'json-schema-2020-12')).toBe(true);
    expect(responseFormatsNotChecked(operations)).toEqual({});
  });
});

describe('a --spec split over files', () => {
  it('follows relative $refs to another file: no $ref left, the schemas read in 3.0 dialect', async () => {
    const { document, operations } = await loadSpec(`${FIXTURES}/split/openapi.yaml`);
    expect(JSON.stringify(document)).not.toContain('$ref');
    const getParcel = byId(operations).get('getParcel') as Operation;
    expect(getParcel.parameters).toEqual([
      { name: 'parcelId', in: 'path', required: true, schema: { type: 'string' } },
    ]);
    expect(getParcel.responses.map((r) => [r.status, r.schema?.required])).toEqual([
      ['200', ['id', 'note']],
      ['404', ['title']],
    ]);
    expect(getParcel.schemaDialect).toBe('openapi-3.0');
    const check = responseSchemaCheck();
    // OpenAPI 3.0's `nullable: true` admits null.
    expect(check.evaluate(makeContext(makeAttempt(getParcel, { json: { id: 'p', note: null } })))).toBe(
      undefined,
    );
    expect(check.evaluate(makeContext(makeAttempt(getParcel, { json: { id: 'p' } })))).toMatch(
      /must have required property 'note'/,
    );
  });

  it('names the file it cannot find, in one line', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'spec-split-'));
    const root = join(dir, 'openapi.yaml');
    writeFileSync(
      root,
      [
        'openapi: 3.1.0',
        'info: {title: x, version: "1"}',
        'paths:',
        '  /a:',
        '    get:',
        '      responses:',
        "        '200': {$ref: './responses.yaml#/Ok'}",
      ].join('\n'),
    );
    const error = await loadSpec(root).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message.split('\n')).toHaveLength(1);
    expect(error?.message).toMatch(/^spec .*openapi\.yaml: Can't resolve \$ref: .*responses\.yaml/);
  });
});

describe('an invalid --spec', () => {
  it('fails with one line naming the file, the first error, where it is, and how many more', async () => {
    const error = await loadSpec(`${FIXTURES}/invalid-3.1.yaml`).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.name).toBe('InputError');
    expect(error?.message).toBe(
      `spec ${FIXTURES}/invalid-3.1.yaml: The field \`version\` must be present on this level. (at #/info; 1 more error)`,
    );
    expect(printedCalls()).toBe(0);
  });

  it('names a version it does not read', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'spec-v4-')), 'v4.yaml');
    writeFileSync(file, 'openapi: 4.0.0\ninfo: {title: x, version: "1"}\n');
    await expect(loadSpec(file)).rejects.toThrow(
      /: OpenAPI 4\.0\.0 is not supported \(3\.0, 3\.1, 3\.2 are\)$/,
    );
  });
});
