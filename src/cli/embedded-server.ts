import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { InputError } from '../api/input-error.ts';
import { resolveServeConfig, type ServeArgs, serverOptionsOf } from '../config/serve.ts';
import { SERVE_FLAGS } from '../config/serve-flags.ts';
import type { ServerOptions } from '../server/options.ts';
import { spawnTied } from './tied-child.ts';

const SERVER = fileURLToPath(new URL('../../bin/embedded-server.js', import.meta.url));

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * What `serve ARGS` would start, resolved here by its own flags and refusals (an InputError naming
 * the flag), on a free port. `env`: variables read as the server reads them (the tenant-key seed).
 */
export async function embeddedServerOptions(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<ServerOptions> {
  const parsed = (await yargs([...args, '--port', '0'])
    .parserConfiguration({ 'strip-dashed': false })
    .options(SERVE_FLAGS)
    .strict()
    .help(false)
    .version(false)
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new InputError(`the embedded server: ${message}`);
    })
    .parseAsync()) as unknown as ServeArgs;
  return serverOptionsOf(resolveServeConfig(parsed, { ...process.env, ...env }));
}

/**
 * Starts the reference server in its own process: the embedded default target of `run` and the
 * target of the benchmarks. `args` are `serve`'s flags, resolved here (embeddedServerOptions) and sent
 * over the IPC channel to bin/embedded-server.js, which loads the server alone: no command line to
 * parse there, and no key, key file or seed on its command line. A process of its own, not an import,
 * so that the generator and the server do not share one event loop (on a 2-core machine each gets a
 * core) and the load side never depends on the server's code. Tied to this process (spawnTied): it
 * exits when this one dies, even by SIGKILL.
 */
export async function spawnServer(
  args: string[],
  env?: Readonly<Record<string, string>>,
): Promise<ServerProcess> {
  const options = await embeddedServerOptions(args, env);
  const child = spawnTied(process.execPath, [SERVER], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Structured clone: the options hold a Date (--sunset).
    serialization: 'advanced',
  });
  child.send(options);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`server did not start in 20 s: ${output}`)), 20_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    const onEarlyExit = (code: number | null) => fail(new Error(`server exited with ${code}: ${output}`));
    child.once('exit', onEarlyExit);
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.removeListener('exit', onEarlyExit);
      resolve({
        url: match[1] as string,
        child,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
