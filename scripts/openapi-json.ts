// `npm run spec:json`: writes src/api/petstore.openapi.json from the YAML document, which stays the
// one to edit (the server serves it). Every start reads the JSON: parsing 49 KB of YAML and loading
// an OpenAPI parser cost a start about 150 ms (@redocly/openapi-core's import alone 220); JSON.parse
// costs under 2. test/api/spec.test.ts fails when the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { BUILT_IN_SPEC_JSON, DEFAULT_SPEC_PATH } from '../src/api/spec.ts';

const document = parse(readFileSync(DEFAULT_SPEC_PATH, 'utf8'));
writeFileSync(BUILT_IN_SPEC_JSON, `${JSON.stringify(document, null, 1)}\n`);
console.log(`written ${BUILT_IN_SPEC_JSON}`);
