import { Ajv, type Options } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { formatsNotChecked, type SchemaDialect } from './schema-formats.ts';

type AnyAjv = Ajv | Ajv2020;

/**
 * Teaches an Ajv instance the parts of OpenAPI's schema dialect that JSON Schema lacks:
 * the numeric formats and the annotation keywords. Both the server (request validation) and the
 * load side (response checks) use it, so a body is judged by the same rules on both sides.
 */
export function addOpenApiVocabulary<A extends AnyAjv>(ajv: A): A {
  addFormats.default(ajv as Ajv);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  // JavaScript numbers hold integers exactly only up to 2^53: an id beyond is rejected, not rounded.
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('float', { type: 'number', validate: () => true });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  for (const keyword of ['example', 'xml', 'externalDocs', 'discriminator']) {
    if (!ajv.getKeyword(keyword)) ajv.addKeyword(keyword);
  }
  return ajv;
}

/** A validator of a document's schemas: draft-07 with OpenAPI 3.0's vocabulary, or 2020-12 for 3.1 and 3.2. */
export function schemaValidator(dialect: SchemaDialect, options: Options): AnyAjv {
  return addOpenApiVocabulary(dialect === 'openapi-3.0' ? new Ajv(options) : new Ajv2020(options));
}

/**
 * Compiles a schema, its formats that no validator of ours knows passing as they are (the result
 * lists them: `responseFormatsNotChecked`); ajv would otherwise warn on stderr at each compile.
 */
export function compileSchema(ajv: AnyAjv, schema: Record<string, unknown>) {
  for (const format of formatsNotChecked([schema])) {
    if (!ajv.formats[format]) ajv.addFormat(format, true);
  }
  return ajv.compile(schema);
}
