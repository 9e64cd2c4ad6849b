import { configJson } from '../config/print.ts';
import { type RunArgs, resolveRunConfig } from '../config/run.ts';
import { printable } from '../config/run-printable.ts';

/** Parse, resolve, then print the configuration or run it. */
export async function run(args: RunArgs): Promise<number> {
  const config = await resolveRunConfig(args);
  if (config.printConfig) {
    process.stdout.write(configJson(printable(config)));
    return 0;
  }
  for (const warning of config.warnings) process.stderr.write(`petstore-load: ${warning}\n`);
  // The execution side (client, recorder, checks, workers, fleet) is loaded only for a run.
  const { execute } = await import('./run-execute.ts');
  return execute(config, (shard) => resolveRunConfig({ ...args, shard }));
}
