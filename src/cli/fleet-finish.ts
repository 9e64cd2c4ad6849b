import { EXIT } from '../api/exit-codes.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { fleetResultOf, incomplete, partsOf } from '../fleet/fleet-result.ts';
import type { FleetStore } from '../fleet/fleet-store.ts';
import { mergeResults } from '../report/merge.ts';
import { evaluateThreshold } from '../report/threshold-evaluate.ts';
import type { RunResult, ThresholdResult } from '../result/types.ts';
import type { RunTick } from '../scenario/execute.ts';
import type { ProgressLine } from './progress.ts';
import type { Ending } from './run.ts';
import type { FleetRun } from './run-fleet.ts';
import { runExitCode, writeCiOutputs, writeRunOutputs } from './run-output.ts';
import { failsForGood } from './thresholds.ts';

/** How long a finished generator waits for the others' results while they are alive. */
const GATHER_WAIT_MS = 120_000;
/** How long a generator tries to store its result through a store that does not answer. */
const STORE_RESULT_MS = 10_000;

/**
 * A fleet generator's second: its snapshot published (the fleet's live figures, and its checkpoint
 * in the store), the status line with the fleet's totals, a stop asked by another generator obeyed,
 * and `--abort-on-fail` thresholds judged on the fleet's totals (this snapshot merged with the
 * others' latest), the first to see a breach telling the others. One tick at a time.
 */
export function fleetTicks(
  fleet: FleetRun,
  o: {
    config: Ending['config'];
    live: ProgressLine | undefined;
    stopped: () => boolean;
    abort: (verdict: ThresholdResult) => void;
  },
): (tick: RunTick) => void {
  const abortable = o.config.thresholds.filter((t) => t.abortOnFail);
  let busy = false;
  const second = async (tick: RunTick) => {
    const { member } = fleet;
    const own = tick.snapshot();
    member.publish(own);
    const others = await member.othersNow();
    o.live?.update(tick, member.totals(tick));
    if (o.stopped()) return;
    const asked = await member.stopAsked();
    if (asked) return o.abort(JSON.parse(asked) as ThresholdResult);
    const due = abortable.filter((t) => tick.elapsedMs >= t.delayAbortEvalMs);
    if (due.length === 0) return;
    const totals = others.length > 0 ? mergeResults([own, ...others]) : own;
    for (const t of due) {
      const verdict = evaluateThreshold(t, totals);
      if (!failsForGood(t, verdict, totals)) continue;
      const judged = { ...verdict, aborted: true };
      member.askStop(JSON.stringify(judged));
      return o.abort(judged);
    }
  };
  return (tick) => {
    if (busy) return;
    busy = true;
    second(tick)
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  };
}

/**
 * The end of a fleet generator's run. Its own result is judged and written to <base>/shard-<I>/ and
 * stored; then, unless its user stopped it, it waits until every shard has stored a result or is
 * lost, merges them, and judges the fleet's result by the thresholds and baseline: that verdict is
 * its exit code, whichever generator it is. The first to get there writes the fleet's result.json
 * and report.html to its base directory and stores them for `merge --fleet`; every one writes the
 * CI outputs asked for (JUnit, summaries) from the fleet's result.
 */
export async function finishFleet(
  own: RunResult,
  fleet: FleetRun,
  o: Ending & {
    judge: (result: RunResult, ending: Ending) => string | undefined;
    tell: (
      result: RunResult,
      told: Ending & { exitCode: number; path: string | undefined; lines: string[] },
    ) => number;
    writeShard: (result: RunResult) => { path: string | undefined; written: string[]; failed: boolean };
    stoppedByUser: boolean;
    log: (line: string) => void;
  },
): Promise<number> {
  const { member } = fleet;
  const { store, index, generators } = member;
  const asked = await member.stopAsked();
  const ending: Ending = {
    ...o,
    abortedBy: o.abortedBy ?? (asked ? (JSON.parse(asked) as ThresholdResult) : undefined),
  };
  // A shard's own verdicts are its own figures', for reading: the fleet's breach is the fleet's.
  o.judge(own, { ...ending, abortedBy: undefined });
  const shard = o.writeShard(own);
  if (!(await storeResult(store, index, own))) {
    o.log(
      `could not store this generator's result in the fleet's store within ${STORE_RESULT_MS / 1000} s: the fleet counts it lost`,
    );
    return EXIT.UNREACHABLE;
  }
  member.stopBeating();
  if (o.stoppedByUser || o.setupFailure) {
    const exitCode = runExitCode(own, {
      interrupted: o.stoppedByUser,
      setupFailed: o.setupFailure !== undefined,
      writeFailed: shard.failed,
    });
    return o.tell(own, { ...ending, exitCode, path: shard.path, lines: shard.written });
  }
  const held = await gathered(store, o.log);
  const result = fleetResultOf(fleet.member.store.name, generators, partsOf(held, store.name));
  const comparison = o.judge(result, ending);
  const writer = await store.claim('result');
  const outputs = { scenario: o.config.scenario.name, out: fleet.baseOut, ...ciOutputs(o.config) };
  const written = writer
    ? writeRunOutputs(result, outputs)
    : { ...writeCiOutputs(result, outputs), path: undefined };
  if (writer) await store.putFleetResult(JSON.stringify(result)).catch(() => undefined);
  // A generator lost, or stopped by its user: the fleet did not send its workload.
  const exitCode = incomplete(result)
    ? EXIT.UNREACHABLE
    : runExitCode(result, {
        interrupted: false,
        setupFailed: false,
        writeFailed: written.failed || shard.failed,
      });
  const lines = [
    `this generator's own result (shard ${index} of ${generators}) written to ${shard.path ?? 'nowhere'}`,
    ...written.written,
    comparison ?? '',
  ];
  return o.tell(result, { ...ending, exitCode, path: written.path, lines });
}

function ciOutputs(config: Ending['config']): { junit?: string; summaryMd?: string } {
  const { junit, summaryMd } = config.outputs;
  return { ...(junit ? { junit } : {}), ...(summaryMd ? { summaryMd } : {}) };
}

async function storeResult(store: FleetStore, index: number, result: RunResult): Promise<boolean> {
  const deadline = now() + STORE_RESULT_MS;
  const json = JSON.stringify(result);
  for (;;) {
    try {
      await store.putResult(index, json);
      return true;
    } catch {
      if (now() > deadline) return false;
      await sleepUntil(now() + 500);
    }
  }
}

/** Every shard's result or its loss: a shard is lost once its generator is silent with no result stored. */
async function gathered(store: FleetStore, log: (line: string) => void) {
  const deadline = now() + GATHER_WAIT_MS;
  let said = false;
  for (;;) {
    try {
      const shards = await store.shards(false);
      const waiting = shards.filter((s) => !s.stored && s.alive);
      if (waiting.length === 0 || now() > deadline) return await store.shards(true);
      if (!said)
        log(`waiting for the fleet's other results (generator ${waiting.map((s) => s.index).join(', ')})`);
      said = true;
    } catch {
      // The store away: asked again until it is back, or the wait is over.
      if (now() > deadline) throw new Error("the fleet's store did not answer");
    }
    await sleepUntil(now() + 200);
  }
}
