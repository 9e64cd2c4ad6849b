import { join } from 'node:path';
import { EXIT } from '../api/exit-codes.ts';
import { firstScenarioText, runCommand, shellWord } from '../codegen/first-scenario.ts';
import { generateTypes } from '../codegen/types-file.ts';
import { type InitArgs, resolveInitConfig } from '../config/types.ts';
import { createFileAtomic, writeRefusal } from '../io/atomic-write.ts';

/** A line on stdout (process.stdout, which a test of the command line in its own process reads). */
const say = (line: string) => process.stdout.write(`${line}\n`);

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

/**
 * `petstore-load init`: a first typed scenario in the working directory, its types and (where there is
 * none) a tsconfig.json; never over a file that exists, each one skipped said. Ends with the one
 * command that runs the scenario. `cwd`: where (the working directory, as the user's shell has it).
 */
export async function init(args: InitArgs, cwd = process.cwd()): Promise<number> {
  const config = resolveInitConfig(args);
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
      say(createFileAtomic(join(cwd, file), text) ? `wrote ${file}` : `skipped ${file}: it exists`);
    } catch (error) {
      process.stderr.write(`petstore-load: cannot write ${file}: ${writeRefusal(error)}\n`);
      failed = true;
    }
  }
  if (failed) return EXIT.WRITE_FAILED;
  if (note) say(`(${note})`);
  say(`\nRun it:\n  ${command}`);
  return EXIT.OK;
}
