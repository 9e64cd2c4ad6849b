import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateTypes } from '../../src/codegen/types-file.ts';

const REPO = join(import.meta.dirname, '..', '..');
const CHECKED_IN = 'src/api/petstore.types.ts';

/**
 * src/api/petstore.types.ts, the pet store's types (src/api/models.ts and the client's methods are
 * made from it), is what `npm run types:petstore` makes of our document today: a change to the
 * document, or to openapi-typescript, fails here until the file is made again.
 */
describe(CHECKED_IN, () => {
  const text = readFileSync(join(REPO, CHECKED_IN), 'utf8');
  const command = /^\/\/ {3}(petstore-load types .*)$/m.exec(text)?.[1];

  it('says in its header the command that makes it, which is `npm run types:petstore`', () => {
    expect(command).toBe(
      `petstore-load types --spec src/api/petstore.openapi.yaml --out ${CHECKED_IN} --no-api-type`,
    );
    const scripts = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts as Record<
      string,
      string
    >;
    expect(scripts['types:petstore']).toBe(
      `node bin/petstore-load.js ${command?.replace(/^petstore-load /, '')}`,
    );
  });

  it('is what that command makes of the document now (else: npm run types:petstore)', async () => {
    const { text: fresh } = await generateTypes({
      spec: 'src/api/petstore.openapi.yaml',
      out: CHECKED_IN,
      apiType: false,
      cwd: REPO,
    });
    expect(fresh === text, `${CHECKED_IN} is out of date: run npm run types:petstore`).toBe(true);
  }, 30_000);
});
