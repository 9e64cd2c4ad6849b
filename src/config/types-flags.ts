import type { Options } from 'yargs';

/** `types`' options, as data: src/config/types.ts resolves what they give. */
export const TYPES_FLAGS = {
  spec: {
    requiresArg: true,
    type: 'string',
    describe: "OpenAPI document to type (default the pet store's own)",
  },
  out: {
    alias: 'o',
    requiresArg: true,
    type: 'string',
    describe: 'TypeScript file to write, e.g. load/api-types.ts (default: stdout)',
  },
  'api-type': {
    type: 'boolean',
    default: true,
    describe:
      "End the file with `export type Api = TypedApi<operations>` for scenarios' flows; --no-api-type leaves openapi-typescript's output alone, importing nothing",
  },
} as const satisfies Record<string, Options>;

/** `init`'s options, as data. */
export const INIT_FLAGS = {
  spec: {
    requiresArg: true,
    type: 'string',
    describe: "OpenAPI document of your API (default the pet store's own, run against the embedded server)",
  },
  name: {
    requiresArg: true,
    type: 'string',
    default: 'first',
    describe: 'Name of the scenario: load/NAME.ts',
  },
} as const satisfies Record<string, Options>;
