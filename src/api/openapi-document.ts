import type { Oas3_1Definition, Oas3_2Definition, Oas3Definition } from '@redocly/openapi-core';

/**
 * An OpenAPI 3.0, 3.1 or 3.2 document, as the parser reads it: its types only, so that no module that
 * names it loads the parser (a start without `--spec` reads our document without it).
 */
export type OpenApiDocument = Oas3Definition | Oas3_1Definition | Oas3_2Definition;
