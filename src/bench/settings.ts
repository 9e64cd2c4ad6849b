import type { RateWindow } from '../api/plans.ts';
import type { TlsOptions } from '../transport/network.ts';
import { effectiveConnections } from './drive.ts';
import type { MixEntry } from './operation-mix.ts';
import type { BenchRequest } from './request-cycle.ts';

/**
 * One benchmark (or one worker thread's share of it), as plain data: it crosses to worker threads.
 * The API key is in the cycle's requests, in memory only; the result names the plan.
 */
export interface BenchSettings {
  /** `http://host:port`. */
  origin: string;
  /** Base URL without credentials, for the result. */
  target: string;
  embeddedTarget: boolean;
  /** The key's plan as far as it is known ('unknown' against a target of our own choosing), and its windows. */
  plan: string;
  windows: RateWindow[];
  mix: MixEntry[];
  cycle: BenchRequest[];
  connections: number;
  pipelining: number;
  rate: number | undefined;
  durationMs: number;
  timeoutMs: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses?: readonly number[];
  /** How many threads drive the benchmark in all (this settings object may be one's share). */
  workers: number;
  /** A client certificate for an https target, as autocannon takes it. */
  tls?: TlsOptions | undefined;
}

/** The mix as `--operations` takes it: `listPets:4,getPetById:3`. */
export function mixText(mix: readonly MixEntry[]): string {
  return mix.map((e) => (e.weight === 1 ? e.operationId : `${e.operationId}:${e.weight}`)).join(',');
}

/** What the benchmark did, in one line: the result's description. */
export function describeBench(
  s: Pick<BenchSettings, 'connections' | 'pipelining' | 'rate' | 'workers' | 'mix'>,
  /** The connections opened (autocannon opens no more than the rate's requests per second). */
  connections: number = effectiveConnections(s.connections, s.rate),
): string {
  const load = s.rate === undefined ? 'as fast as the target answers' : `at a fixed ${s.rate} requests/s`;
  const threads = s.workers > 1 ? `, ${s.workers} worker threads` : '';
  return `Raw-throughput benchmark (autocannon) ${load}: ${connections} connections, pipelining ${s.pipelining}${threads}; operations ${mixText(s.mix)}`;
}
