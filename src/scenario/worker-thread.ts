import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { buildTenantMix } from '../api/tenants.ts';
import { PortQuotaStore } from '../client/port-quota-store.ts';
import type { QuotaStore } from '../client/quota-store.ts';
import { RedisQuotaStore } from '../client/redis-quota-store.ts';
import { answerSnapshots } from '../result/thread-snapshots.ts';
import type { RunResult } from '../result/types.ts';
import type { Workload } from './define.ts';
import { executeScenario } from './execute.ts';
import { loadScenario } from './load.ts';
import { SetupError } from './setup-teardown.ts';
import { shareOf, shareOfCounts } from './share.ts';
import { tenantLoads, tenantShare } from './tenant-load.ts';
import type { FromWorker, ToWorker, WorkerJob } from './worker-job.ts';
import { resolveWorkload } from './workload.ts';

/**
 * One worker thread of `run --workers N`: its share of the workload through its own client and
 * recorder, the quota shared with the others; its result goes back to the main thread to be merged.
 */
const { job, quotaPort, snapshotPort } = workerData as {
  job: WorkerJob;
  quotaPort: MessagePort;
  snapshotPort: MessagePort;
};
const port = parentPort as NonNullable<typeof parentPort>;
const post = (message: FromWorker) => port.postMessage(message);

const interrupt = new AbortController();
let interruptedBy: string | undefined;
const waiters: ((m: ToWorker) => boolean)[] = [];
/** Messages no one waited for yet: 'start' can come before this worker has booted far enough to ask. */
const unread: ToWorker[] = [];
port.on('message', (message: ToWorker) => {
  if (message.type === 'interrupt') {
    interruptedBy = message.signal;
    interrupt.abort();
    return;
  }
  const i = waiters.findIndex((accept) => accept(message));
  if (i >= 0) waiters.splice(i, 1);
  else unread.push(message);
});
function next<T extends ToWorker['type']>(...types: T[]): Promise<Extract<ToWorker, { type: T }>> {
  const j = unread.findIndex((m) => types.includes(m.type as T));
  if (j >= 0) return Promise.resolve(unread.splice(j, 1)[0] as Extract<ToWorker, { type: T }>);
  return new Promise((resolve) => {
    waiters.push((m) => {
      if (!types.includes(m.type as T)) return false;
      resolve(m as Extract<ToWorker, { type: T }>);
      return true;
    });
  });
}

/** The worker's tenants: the whole mix (the recorder names every tier), its own keys' loads. */
function tenantsOf(t: NonNullable<WorkerJob['tenants']>, declared: Workload, kind: 'open' | 'closed') {
  let next = 0;
  const mix = buildTenantMix(
    t.specs,
    (plan) => t.windowsByPlan[plan] ?? [],
    () => t.keys[next++] as string,
  );
  return { mix, loads: tenantLoads(mix, declared, job.overrides, kind, tenantShare(job.shard, job.share)) };
}

/** The main thread reached the store a moment ago; a worker that cannot is told apart from a bug. */
class StoreUnreachable extends Error {}

async function connectStore(quota: { url: string; label: string }): Promise<QuotaStore> {
  try {
    return await RedisQuotaStore.connect(quota.url);
  } catch (error) {
    throw new StoreUnreachable(`--quota-store ${quota.label}: cannot connect (${(error as Error).message})`);
  }
}

// The main thread asks for this worker's result so far (a checkpoint, a second signal).
let snapshot: (() => RunResult) | undefined;
answerSnapshots(snapshotPort, () => snapshot?.());

let store: QuotaStore | undefined;
let last: FromWorker;
try {
  store = job.quota.kind === 'port' ? new PortQuotaStore(quotaPort) : await connectStore(job.quota);
  const scenario = await loadScenario(job.scenarioPath);
  const whole = resolveWorkload(scenario.workload, job.planRate, job.overrides);
  const tenants = job.tenants && tenantsOf(job.tenants, scenario.workload, whole.kind);
  // A mix is spread by its keys: each worker sends the whole rate of the keys that fall to it.
  const workload = tenants
    ? shareOfCounts(whole, tenantShare(job.shard, job.share))
    : shareOf(job.shard ? shareOf(whole, job.shard) : whole, job.share);
  const first = job.share.index === 1;
  const result = await executeScenario({
    scenario,
    workload,
    baseUrl: job.baseUrl,
    target: job.target,
    embeddedTarget: job.embeddedTarget,
    apiKey: job.apiKey,
    operations: job.operations,
    plan: job.plan,
    windows: job.windows,
    timeScale: job.timeScale,
    enforce: job.enforce,
    allowBanRisk: job.allowBanRisk,
    limiter: job.limiter,
    maxInFlight: job.maxInFlight,
    contract: job.contract,
    timeoutMs: job.timeoutMs,
    maxAttempts: job.maxAttempts,
    refusalStatuses: job.refusalStatuses,
    network: job.network,
    networkSeen: job.networkSeen,
    spec: job.spec,
    signal: interrupt.signal,
    interruptedBy: () => interruptedBy,
    // Each worker its own stream of flow choices, all of them repeatable from the run's seed.
    seed: (job.seed + job.share.index - 1) % 2 ** 32,
    sharedQuota: {
      store,
      key: job.quota.key,
      label: job.quota.kind === 'redis' ? job.quota.label : `main thread (${job.share.count} workers)`,
      ...(job.quota.kind === 'redis' && job.quota.localShare ? { localShare: job.quota.localShare } : {}),
    },
    shard: job.shard,
    onSnapshot: (take) => {
      snapshot = take;
    },
    ...(tenants ? { tenants } : {}),
    coordination: {
      setup: async (run) => {
        if (first) {
          try {
            post({ type: 'setup-done', data: await run() });
          } catch (error) {
            post({ type: 'setup-failed', message: (error as Error).message });
            throw error;
          }
        }
        const go = await next('start', 'abort');
        if (go.type === 'abort') throw new SetupError(go.message);
        return go.data as never;
      },
      beforeTeardown: async () => {
        post({ type: 'workload-done' });
        if (!first) return false;
        await next('teardown');
        return true;
      },
    },
  });
  last = { type: 'result', result };
} catch (error) {
  last = {
    type: 'failed',
    message: (error as Error).message,
    setup: error instanceof SetupError,
    ...(error instanceof StoreUnreachable ? { unreachable: true } : {}),
  };
}
// The last word, once the store is closed: the main thread ends a thread that lingers after it.
await store?.close();
snapshotPort.close();
post(last);
// The listener on the main thread's messages would hold the thread open; the result is sent.
port.close();
