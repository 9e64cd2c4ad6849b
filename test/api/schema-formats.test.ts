import { formatNames } from 'ajv-formats/dist/formats.js';
import { describe, expect, it } from 'vitest';
import { schemaValidator } from '../../src/api/ajv.ts';
import { formatsNotChecked, OPENAPI_FORMATS } from '../../src/api/schema-formats.ts';

describe('formatsNotChecked', () => {
  it('counts as checked exactly the formats both validators know', () => {
    const known = [...formatNames, ...OPENAPI_FORMATS];
    const schema = { type: 'object', properties: Object.fromEntries(known.map((f) => [f, { format: f }])) };
    expect(formatsNotChecked([schema])).toEqual([]);
    // Strict, a validator refuses a format it does not know: each one listed as checked is defined.
    for (const dialect of ['openapi-3.0', 'json-schema-2020-12'] as const)
      expect(
        () => schemaValidator(dialect, { strictSchema: true, strictTypes: false }).compile(schema),
        dialect,
      ).not.toThrow();
    expect(() =>
      schemaValidator('openapi-3.0', { strictSchema: true, strictTypes: false }).compile({
        format: 'iso-country-code',
      }),
    ).toThrow(/unknown format "iso-country-code"/);
  });

  it('finds a format at any depth, each once and sorted; not in data, and a property called format is a schema', () => {
    const shared = { type: 'string', format: 'iso-country-code' };
    const schemas = [
      {
        type: 'object',
        properties: {
          from: shared,
          to: shared,
          // A property named `format` or `example` is a schema, not the keyword.
          format: { type: 'string', format: 'mime-type' },
          example: { allOf: [{ format: 'phone' }] },
        },
        // Data: an example or an enum member that happens to hold a `format` names nothing.
        example: { format: 'not-a-format' },
        examples: [{ format: 'nor-this' }],
        enum: [{ format: 'nor-that' }],
        default: { format: 'nor-the-default' },
      },
      { type: 'array', items: { $defs: { x: { format: 'uuid' } }, anyOf: [{ format: 'iban' }] } },
      undefined,
    ];
    expect(formatsNotChecked(schemas)).toEqual(['iban', 'iso-country-code', 'mime-type', 'phone']);
  });

  it('walks a schema that refers to itself without looping', () => {
    const node: Record<string, unknown> = { type: 'object', format: 'tree' };
    node.properties = { child: node };
    expect(formatsNotChecked([node])).toEqual(['tree']);
  });
});
