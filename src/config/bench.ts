import type { AuthPlacement, ResolvedAuth } from '../api/auth.ts';
import { BEARER, describeAuth, parseAuthHeader, withAuthOverride } from '../api/auth.ts';
import { DEFAULT_TIMEOUT_MS } from '../api/defaults.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import type { Operation } from '../api/operations.ts';
import { DEFAULT_SPEC_PATH, loadSpec } from '../api/spec.ts';
import { type MixEntry, parseOperationMix } from '../bench/operation-mix.ts';
import { STEPS } from '../bench/steps.ts';
import type { SinkSpec } from '../metrics/sinks.ts';
import { parseThreshold, type Threshold } from '../report/threshold-parse.ts';
import { parseBaseUrl, publicTarget } from './base-url.ts';
import { metricsFlags } from './metrics-flags.ts';
import { type NetworkArgs, type NetworkConfig, networkFlags } from './network-flags.ts';
import { parseRefusalStatuses } from './refusal-flags.ts';
import { Secret } from './secret.ts';

/** The key the embedded server gives an enterprise plan without limits (see src/bench/unlimited-plans.ts). */
export const EMBEDDED_KEY = 'enterprise-demo-key';

/** What `bench`'s flags say, as yargs hands them over (camel-cased). */
export interface BenchArgs extends NetworkArgs {
  operations: string;
  duration: string;
  connections: number;
  pipelining: number;
  rate?: string | undefined;
  workers: number;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  authHeader?: string | undefined;
  threshold?: string[] | undefined;
  refusalStatus?: (string | number)[] | undefined;
  out?: string | undefined;
  quiet: boolean;
  metrics?: string[] | undefined;
  metricsInterval?: string | undefined;
  printConfig?: boolean | undefined;
}

/** One benchmark, resolved and checked before a server starts or a request leaves. */
export interface BenchConfig {
  readonly specPath: string;
  /** The document's operations, loaded once here (printed as how many). */
  readonly operations: readonly Operation[];
  readonly mix: readonly MixEntry[];
  /** The duration as typed, for the status line, and in milliseconds. */
  readonly duration: string;
  readonly durationMs: number;
  readonly timeoutMs: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  readonly refusalStatuses: readonly number[];
  readonly connections: number;
  readonly pipelining: number;
  readonly workers: number;
  /** Requests per second over all connections; undefined for flat out. */
  readonly rate: number | undefined;
  readonly thresholds: readonly Threshold[];
  readonly metrics: { readonly sinks: readonly SinkSpec[]; readonly intervalMs: number } | undefined;
  /** No --base-url: the reference server is started with a plan that never limits. */
  readonly embedded: boolean;
  /** The target as given (it may hold credentials: printed as `target` only). */
  readonly baseUrl: URL | undefined;
  /** Base URL without credentials, query or fragment: what a result and a message may show. */
  readonly target: string | undefined;
  readonly apiKey: Secret;
  /** TLS of the target's connections (autocannon's, setup's); no HTTP/2, no proxy. */
  readonly network: NetworkConfig;
  /** Said on stderr before the benchmark starts (and shown by --print-config). */
  readonly warnings: readonly string[];
  /** Where the key goes; `from` says why. */
  readonly auth: AuthPlacement & { readonly from: string; readonly shown: string };
  readonly out: string | undefined;
  readonly quiet: boolean;
}

export async function resolveBenchConfig(
  args: BenchArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BenchConfig> {
  const spec = await loadSpec(DEFAULT_SPEC_PATH);
  const ids = spec.operations.map((op) => op.id);
  const mix = parseOperationMix(
    args.operations,
    ids.filter((id) => id in STEPS),
  );
  const durationMs = parseDuration(args.duration, '--duration');
  if (durationMs < 100) throw new InputError(`--duration: '${args.duration}' is too short (at least 100ms)`);
  const load = resolveLoad(args, mix);
  const thresholds = (args.threshold ?? []).map((t) => parseThreshold(t, 'cli', new Set(ids)));
  const metrics = metricsFlags({ ...args, workers: 1 });
  // Each worker thread records into a recorder of its own that this thread cannot read while it
  // runs (it sees their progress counts only, and their results once they end): refused, as run does.
  if (metrics && load.workers > 1)
    throw new InputError(
      '--metrics pushes the figures of one thread: it cannot be used with --workers yet (run one bench process per worker instead)',
    );
  const target = resolveTarget(args, env);
  const network = benchNetwork(args, target.baseUrl, env);
  const operations = [...spec.operations];
  // Printed, the operations read as a count: the document is named by specPath.
  Object.defineProperty(operations, 'toJSON', { value: () => `${operations.length} operations` });
  return Object.freeze({
    specPath: DEFAULT_SPEC_PATH,
    operations,
    mix,
    duration: args.duration,
    durationMs,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    refusalStatuses: parseRefusalStatuses(args.refusalStatus),
    ...load,
    thresholds,
    metrics: metrics && hideEndpoints(metrics),
    ...target,
    warnings: [...target.warnings, ...network.warnings],
    network,
    auth: resolvePlacement(args.authHeader),
    out: args.out,
    quiet: args.quiet,
  });
}

/**
 * The network flags as autocannon can honour them: TLS with a client certificate, yes; HTTP/2 and a
 * proxy, no (refused in one line, rather than a benchmark that silently went another way). It never
 * verifies a certificate, so the target's is verified once, before the benchmark (src/cli/bench.ts).
 */
function benchNetwork(args: BenchArgs, baseUrl: URL | undefined, env: NodeJS.ProcessEnv): NetworkConfig {
  if (args.http2)
    throw new InputError(
      '--http2: bench drives autocannon, which speaks HTTP/1.1 only; measure HTTP/2 with run --http2',
    );
  const network = networkFlags(args, baseUrl, env);
  if (network.proxyFrom !== undefined)
    throw new InputError(
      network.proxyFrom === '--proxy'
        ? '--proxy: bench drives autocannon, which cannot go through a proxy; measure through it with run --proxy'
        : `${network.proxyFrom} names a proxy for ${baseUrl?.host}: bench drives autocannon, which cannot go through one; add the host to NO_PROXY to bench it directly, or measure through the proxy with run`,
    );
  const verifiedOnce =
    baseUrl?.protocol === 'https:' && !args.insecure
      ? ["autocannon does not verify certificates: the target's is verified once, before the benchmark"]
      : [];
  return { ...network, warnings: [...network.warnings, ...verifiedOnce] };
}

function wholeNumber(value: number, flag: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new InputError(`--${flag}: expected a whole number from ${min} to ${max}, got ${value}`);
  return value;
}

function parseRate(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const rate = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(rate) || rate < 1)
    throw new InputError(
      `--rate: '${text}' is not a rate (a whole number of requests per second, at least 1)`,
    );
  return rate;
}

/** Connections, pipelining, threads and rate: counts, and the combinations autocannon cannot keep. */
function resolveLoad(args: BenchArgs, mix: readonly MixEntry[]) {
  const connections = wholeNumber(args.connections, 'connections', 1, 10_000);
  const pipelining = wholeNumber(args.pipelining, 'pipelining', 1, 1000);
  const workers = wholeNumber(args.workers, 'workers', 1, connections);
  const rate = parseRate(args.rate);
  if (rate !== undefined && rate < workers)
    throw new InputError(`--rate ${rate} cannot be shared by ${workers} workers (at least 1 request/s each)`);
  if (rate !== undefined && pipelining > 1)
    throw new InputError(
      "--pipelining with --rate: autocannon's rate limiter resumes one request per connection after each pause, so pipelining would silently fall to 1",
    );
  const chained = mix.filter((e) => STEPS[e.operationId]?.consumes !== undefined).map((e) => e.operationId);
  if (chained.length > 0 && pipelining > 1)
    throw new InputError(
      `--pipelining ${pipelining}: ${chained.join(', ')} use what the request before them on their connection created, which needs --pipelining 1`,
    );
  return { connections, pipelining, workers, rate };
}

/** The target and its key: the embedded server with its unlimited key, or --base-url with the user's. */
function resolveTarget(args: BenchArgs, env: NodeJS.ProcessEnv) {
  if (args.baseUrl === undefined) {
    const apiKey =
      args.apiKey === undefined
        ? new Secret(EMBEDDED_KEY, "the embedded server's unlimited enterprise key")
        : new Secret(args.apiKey, '--api-key');
    // PETSTORE_API_KEY is a real target's key, which the embedded server would refuse: left unused, and said so.
    const warnings =
      args.apiKey === undefined && env.PETSTORE_API_KEY !== undefined
        ? [
            'PETSTORE_API_KEY is not used without --base-url: the embedded server is benchmarked with its own unlimited key (give --base-url to bench your target with it)',
          ]
        : [];
    return { embedded: true, baseUrl: undefined, target: undefined, apiKey, warnings };
  }
  const baseUrl = parseBaseUrl(args.baseUrl);
  // PETSTORE_API_KEY is a real target's key: the embedded server knows only its demo keys.
  const apiKey =
    args.apiKey !== undefined
      ? new Secret(args.apiKey, '--api-key')
      : env.PETSTORE_API_KEY !== undefined
        ? new Secret(env.PETSTORE_API_KEY, 'PETSTORE_API_KEY')
        : undefined;
  if (apiKey === undefined) throw new InputError('--base-url needs --api-key KEY (or PETSTORE_API_KEY)');
  const target = publicTarget(baseUrl);
  // A URL's userinfo is a credential: printed, the base URL reads as the public target.
  Object.defineProperty(baseUrl, 'toJSON', { value: () => target });
  return { embedded: false, baseUrl, target, apiKey, warnings: [] };
}

function resolvePlacement(authHeader: string | undefined) {
  const placement = authHeader === undefined ? BEARER : parseAuthHeader(authHeader);
  return {
    ...placement,
    // Without the flag each operation's scheme places the key: Bearer on every one of the built-in document's.
    from: authHeader === undefined ? "each operation's security scheme" : '--auth-header',
    shown: describeAuth(placement),
  };
}

/** A push URL's user:password is a credential: printed, a sink reads as its kind and host. */
function hideEndpoints(metrics: { sinks: SinkSpec[]; intervalMs: number }) {
  return {
    ...metrics,
    toJSON: () => ({
      sinks: metrics.sinks.map((s) => `${s.kind} ${s.host}`),
      intervalMs: metrics.intervalMs,
    }),
  };
}

/**
 * The operations with the key where `--auth-header` puts it, else where each one's own security scheme
 * does: setup's client and the benchmark's cycle build their requests from these (src/api/request.ts).
 */
export function benchOperations<T extends { auth: ResolvedAuth }>(
  config: Pick<BenchConfig, 'auth'>,
  operations: T[],
): T[] {
  return withAuthOverride(operations, config.auth.from === '--auth-header' ? config.auth : undefined);
}
