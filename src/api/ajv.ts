import type { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * Teaches an Ajv instance the parts of OpenAPI 3.0's schema dialect that JSON Schema lacks:
 * the numeric formats and the annotation keywords. Both the server (request validation) and the
 * load side (response checks) use it, so a body is judged by the same rules on both sides.
 */
export function addOpenApiVocabulary(ajv: Ajv): Ajv {
  addFormats.default(ajv);
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
