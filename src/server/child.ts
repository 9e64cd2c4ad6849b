import { EXIT } from '../api/exit-codes.ts';
import { exitWithParent } from '../api/exit-with-parent.ts';
import type { ServerOptions } from './options.ts';

/**
 * The embedded server's process (bin/embedded-server.js): waits for its options from the parent
 * over the IPC channel (resolved there, by the flags `serve` takes: src/cli/embedded-server.ts),
 * listens, says `listening on URL` on stdout, and closes on SIGTERM or SIGINT. It exits as soon as
 * the parent is gone (the channel closes), as every child of ours does. Only the server is loaded:
 * no command line to parse, no option tables.
 */
if (!process.send) {
  process.stderr.write('petstore-load: the embedded server is started by petstore-load itself\n');
  process.exit(EXIT.USAGE);
}
// The server and its framework are what this process costs: loaded while the options are on their way.
const loading = import('./index.ts');
// Its failure is told where it is awaited, not as an unhandled rejection before the options come.
loading.catch(() => undefined);
process.once('message', (options: ServerOptions) => {
  // Until the options came, the channel held the process; from now on it only ends it with the parent.
  exitWithParent();
  listen(options).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    process.stderr.write(
      `petstore-load: the embedded server could not start: ${code ?? (error as Error).message}\n`,
    );
    process.exit(code ? EXIT.LISTEN_FAILED : EXIT.INTERNAL);
  });
});

async function listen(options: ServerOptions): Promise<void> {
  const { startServer } = await loading;
  const server = await startServer(options);
  process.stdout.write(`listening on ${server.url}\n`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(EXIT.INTERNAL),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
