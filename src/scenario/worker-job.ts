import type { LimiterKind } from '../api/limiter-kinds.ts';
import type { Operation } from '../api/operations.ts';
import type { RateWindow } from '../api/plans.ts';
import type { TenantGroupSpec } from '../api/tenants.ts';
import type { Contract } from '../record/checks/contract.ts';
import type { NetworkSeen } from '../result/types.ts';
import type { NetworkOptions } from '../transport/network.ts';
import type { Share } from './share.ts';
import type { WorkloadOverrides } from './workload.ts';

/**
 * What a worker thread needs to run its part of a run: everything `executeScenario` takes, as the
 * main thread resolved it, in plain data. Functions cannot cross threads, so the worker imports the
 * scenario's module for its flows and rebuilds the workload's curves from the same declared
 * workload, plan rate and overrides (pure and cheap); the document is not read again.
 */
export interface WorkerJob {
  scenarioPath: string;
  /** The document's operations as resolved, each with its key placement (`--auth-header` applied). */
  operations: Operation[];
  /** How the result names the document. */
  spec: string;
  overrides: WorkloadOverrides;
  /** The plan's rate over its shortest window, for rates given as a share of it. */
  planRate: number;
  /** This worker's part of the workload; `shard` is the run's part of the whole (--shard). */
  share: Share;
  shard?: Share;
  baseUrl: string;
  target: string;
  embeddedTarget: boolean;
  apiKey: string | undefined;
  plan: string;
  windows: RateWindow[];
  timeScale: number;
  enforce: boolean;
  allowBanRisk: boolean;
  limiter?: LimiterKind;
  maxInFlight?: number;
  contract?: Contract;
  timeoutMs: number;
  maxAttempts: number;
  refusalStatuses?: number[];
  network?: NetworkOptions | undefined;
  networkSeen?: NetworkSeen | undefined;
  seed: number;
  /**
   * A tenant mix, as plain data: the groups, every key in tenant order (kept in memory, never
   * written), and each plan's windows. The worker takes the keys that fall to it (tenantShare).
   */
  tenants?: { specs: TenantGroupSpec[]; keys: string[]; windowsByPlan: Record<string, RateWindow[]> };
  /** Where the key's quota is shared: the main thread's store (through a port), or Redis. */
  quota:
    | { kind: 'port'; key: string }
    | { kind: 'redis'; url: string; label: string; key: string; localShare?: number };
}

/** Messages between a worker and the main thread, besides the quota store's own port. */
export type ToWorker =
  | { type: 'start'; data: unknown }
  | { type: 'abort'; message: string }
  | { type: 'teardown' }
  | { type: 'interrupt'; signal: string };

export type FromWorker =
  | { type: 'setup-done'; data: unknown }
  | { type: 'setup-failed'; message: string }
  | { type: 'workload-done' }
  | { type: 'result'; result: unknown }
  /** `unreachable`: the worker could not reach the shared quota store (exit 3, as for the main thread). */
  | { type: 'failed'; message: string; setup: boolean; unreachable?: boolean };
