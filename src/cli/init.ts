import { join } from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { EXIT } from '../api/exit-codes.ts';
import type { LoadedSpec } from '../api/spec.ts';
import { firstOperations, firstScenarioText } from '../codegen/first-scenario.ts';
import { generateTypes } from '../codegen/types-file.ts';
import { type InitArgs, resolveInitConfig } from '../config/types.ts';
import { createFileAtomic, writeRefusal } from '../io/atomic-write.ts';

const TYPES_FILE = 'load/api-types.ts';

/**
 * A tsconfig for scenarios as they run: never emitted, loaded as ES modules whatever package.json
 * says, `./x.ts`, `./x.js`, `./x` and a folder's index.ts all resolving (the scenario hooks do what a
 * bundler does), no syntax that needs more than stripping types.
 */
export const SCENARIO_TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'preserve',
      moduleResolution: 'bundler',
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      verbatimModuleSyntax: true,
      erasableSyntaxOnly: true,
      skipLibCheck: true,
    },
    include: ['load'],
  },
  null,
  2,
)}\n`;

/** A word as a shell reads it: quoted when it holds anything but the plain characters of a path. */
const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;

/**
 * The document's first server, its variables at their defaults; a relative one (`/v1`) on
 * localhost:8080, for the user to change.
 */
export function serverUrl(document: OpenAPIV3.Document): { url: string; guessed: boolean } {
  const server = document.servers?.[0];
  const url = (server?.url ?? '').replace(
    /\{([^}]+)\}/g,
    (whole, name: string) => server?.variables?.[name]?.default ?? whole,
  );
  if (/^https?:\/\/[^{}]+$/.test(url)) return { url: url.replace(/\/$/, ''), guessed: false };
  return { url: `http://localhost:8080${url.startsWith('/') ? url.replace(/\/$/, '') : ''}`, guessed: true };
}

/** The one command that runs the scenario: against the embedded server for ours, else the document's server. */
function runCommand(scenarioFile: string, specArg: string | undefined, spec: LoadedSpec) {
  const words = ['npx', 'petstore-load', 'run', scenarioFile];
  if (specArg === undefined) return { command: words.join(' '), note: undefined };
  const { url, guessed } = serverUrl(spec.document);
  words.push('--spec', shellWord(specArg), '--base-url', shellWord(url));
  const needsKey = firstOperations(spec).some((op) => op.requiresAuth);
  return {
    command: `${needsKey ? 'PETSTORE_API_KEY=<your key> ' : ''}${words.join(' ')}`,
    note: guessed ? `the document names no absolute server URL: put yours in --base-url` : undefined,
  };
}

/**
 * `petstore-load init`: a first typed scenario in the working directory, its types and (where there is
 * none) a tsconfig.json; never over a file that exists, each one skipped said. Ends with the one
 * command that runs the scenario.
 */
export async function init(args: InitArgs): Promise<number> {
  const config = resolveInitConfig(args);
  const cwd = process.cwd();
  const scenarioFile = `load/${config.name}.ts`;
  const typesCommand = ['npx petstore-load types', ...(config.spec ? ['--spec', shellWord(config.spec)] : [])]
    .concat(['--out', TYPES_FILE])
    .join(' ');
  const types = await generateTypes({ spec: config.spec, out: TYPES_FILE, apiType: true, cwd });
  const { command, note } = runCommand(scenarioFile, config.spec, types.spec);
  const scenario = firstScenarioText(types.spec, {
    name: config.name,
    command,
    typesCommand,
    typesModule: './api-types.ts',
  });
  const files: [string, string][] = [
    [scenarioFile, scenario],
    [TYPES_FILE, types.text],
    ['tsconfig.json', SCENARIO_TSCONFIG],
  ];
  let failed = false;
  for (const [file, text] of files) {
    try {
      console.log(createFileAtomic(join(cwd, file), text) ? `wrote ${file}` : `skipped ${file}: it exists`);
    } catch (error) {
      process.stderr.write(`petstore-load: cannot write ${file}: ${writeRefusal(error)}\n`);
      failed = true;
    }
  }
  if (failed) return EXIT.WRITE_FAILED;
  if (note) console.log(`(${note})`);
  console.log(`\nRun it:\n  ${command}`);
  return EXIT.OK;
}
