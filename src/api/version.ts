import { readFileSync } from 'node:fs';

/** The version users installed, from package.json, so results name it without a second copy to update. */
export const TOOL_VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;
