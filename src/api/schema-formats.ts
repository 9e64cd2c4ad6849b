import { formatNames } from 'ajv-formats/dist/formats.js';

/** How a document's schemas read: OpenAPI 3.0's own dialect, or JSON Schema 2020-12 (3.1 and 3.2). */
export type SchemaDialect = 'openapi-3.0' | 'json-schema-2020-12';

type JsonSchema = Record<string, unknown>;

/** OpenAPI's numeric formats, which src/api/ajv.ts defines beside ajv-formats' own. */
export const OPENAPI_FORMATS = ['int32', 'int64', 'float', 'double'] as const;

/** Every format a body's validator checks (this module reads the names only: no validator is loaded). */
const CHECKED = new Set<string>([...formatNames, ...OPENAPI_FORMATS]);

// Keywords whose values are data (an enum's members, an example), not schemas: a `format` in them names nothing.
const DATA = new Set(['example', 'examples', 'const', 'enum', 'default']);
// Keywords whose values map names to schemas: a property called `format` or `example` is a schema there.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * The formats the schemas name that no validator of ours knows (`iso-country-code`), sorted and each
 * once. A body is checked against the rest of its schema and these pass as they are: the result
 * lists them once rather than ajv warning at every schema it compiles.
 */
export function formatsNotChecked(schemas: Iterable<JsonSchema | undefined>): string[] {
  const found = new Set<string>();
  const seen = new Set<object>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'format' && typeof value === 'string') {
        if (!CHECKED.has(value)) found.add(value);
      } else if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null) {
        for (const schema of Object.values(value)) walk(schema);
      } else if (!DATA.has(key)) {
        walk(value);
      }
    }
  };
  for (const schema of schemas) walk(schema);
  return [...found].sort();
}

/**
 * The formats not checked in the response bodies of a run's operations (what the response-schema
 * check validates), as the result's config and `--print-config` carry them: absent when none.
 */
export function responseFormatsNotChecked(
  operations: readonly { responses: readonly { schema: JsonSchema | undefined }[] }[],
): { formatsNotChecked?: string[] } {
  const formats = formatsNotChecked(operations.flatMap((op) => op.responses.map((r) => r.schema)));
  return formats.length > 0 ? { formatsNotChecked: formats } : {};
}
