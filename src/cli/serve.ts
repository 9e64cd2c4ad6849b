import { DEMO_KEYS } from '../api/demo-keys.ts';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { TENANT_SEED_ENV } from '../api/tenants.ts';
import { resolveServeConfig, type ServeArgs, serverOptionsOf } from '../config/serve.ts';
import { type RunningServer, startServer } from '../server/index.ts';
import { DEFAULT_TENANT_SEED, SERVER_DEFAULTS } from '../server/options.ts';

// Kept here for the callers that knew them from the command.
export { parseTenantKeys, serverOptionsFromArgs } from '../config/serve.ts';

/** How many keys were minted, and from which seed: never a key, nor a seed from the environment. */
function printMinted(counts: Record<string, number>, seedFromEnv: boolean): void {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const perPlan = Object.entries(counts)
    .map(([plan, n]) => `${plan} ${n}`)
    .join(', ');
  const seed = seedFromEnv
    ? `the seed in $${TENANT_SEED_ENV}`
    : `the default seed '${DEFAULT_TENANT_SEED}' (mintedKey(seed, plan, n) in src/api/tenants.ts)`;
  console.log(`minted ${total} tenant keys (${perPlan}) from ${seed}`);
}

/** Parse, resolve, listen until a signal. */
export async function serve(args: ServeArgs): Promise<void> {
  const config = resolveServeConfig(args);
  const options = serverOptionsOf(config);
  let server: RunningServer;
  try {
    server = await startServer(options);
  } catch (error) {
    if (error instanceof InputError && error.message.startsWith('quotaStore '))
      throw new InputError(`--quota-store${error.message.slice('quotaStore'.length)}`, EXIT.UNREACHABLE);
    if (error instanceof InputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    // Only a refused listen is the user's environment; anything else is ours and must say so.
    if (!code || !['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EINVAL'].includes(code))
      throw error;
    throw new InputError(
      `cannot listen on ${options.host}:${options.port}: ${code ?? (error as Error).message}`,
      EXIT.LISTEN_FAILED,
    );
  }
  console.log(`listening on ${server.url}`);
  if (options.keys) {
    console.log(`API keys: ${Object.keys(options.keys).length} from ${config.keysFile}`);
  } else {
    console.log('demo keys (Authorization: Bearer <key>):');
    for (const [key, plan] of Object.entries(DEMO_KEYS)) console.log(`  ${key.padEnd(20)} ${plan}`);
  }
  if (options.tenantKeys) printMinted(options.tenantKeys, options.tenantSeed !== undefined);
  const longer = options.longerWindows ?? SERVER_DEFAULTS.longerWindows;
  if (options.limiter !== 'fixed' || longer !== 'fixed')
    console.log(
      `limiter ${options.limiter}${options.burst === undefined ? '' : ` (burst ${options.burst})`}${options.countRefused ? ', refused requests counted' : ''} on each plan's shortest window; longer windows ${longer === 'sliding' ? 'sliding logs, the day fixed' : 'fixed'}`,
    );
  const refusalStatus = options.refusalStatus ?? SERVER_DEFAULTS.refusalStatus;
  const refusalRetryAfter = options.refusalRetryAfter ?? SERVER_DEFAULTS.refusalRetryAfter;
  if (refusalStatus !== SERVER_DEFAULTS.refusalStatus || !refusalRetryAfter)
    console.log(`refusals answered ${refusalStatus}${refusalRetryAfter ? '' : ' without Retry-After'}`);
  if (options.timeScale !== 1)
    console.log(`time scale ${options.timeScale}: a minute window lasts ${60 / (options.timeScale ?? 1)} s`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      console.log(`${signal}: stopping`);
      server.close().then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
