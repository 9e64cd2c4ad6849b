import { resolve } from 'node:path';
import { EXIT } from '../api/exit-codes.ts';
import { generateTypes } from '../codegen/types-file.ts';
import { resolveTypesConfig, type TypesArgs } from '../config/types.ts';
import { writeOutput } from './write-output.ts';

/** A line on stdout (process.stdout, which a test of the command line in its own process reads). */
const say = (line: string) => process.stdout.write(`${line}\n`);

/** `petstore-load types`: a document's TypeScript declarations, to `--out` or stdout. */
export async function types(args: TypesArgs): Promise<number> {
  const config = resolveTypesConfig(args);
  const { text, spec } = await generateTypes(config);
  if (config.out === undefined) {
    process.stdout.write(text);
    return EXIT.OK;
  }
  const path = resolve(config.out);
  if (!writeOutput(path, text, 'types')) return EXIT.WRITE_FAILED;
  const unnamed = spec.operations.filter((op) => op.id === `${op.method} ${op.path}`).length;
  const typed = spec.operations.length - unnamed;
  say(
    `types of ${typed} operation${typed === 1 ? '' : 's'} written to ${path}${unnamed > 0 ? ` (${unnamed} without an operationId left out: api.call names an operation by its id)` : ''}`,
  );
  return EXIT.OK;
}
