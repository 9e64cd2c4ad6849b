import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { withStore } from '../fleet/fleet-coordination.ts';
import { type FleetPart, fleetResultOf, incomplete, partsOf } from '../fleet/fleet-result.ts';
import type { FleetStore, ShardHeld } from '../fleet/fleet-store.ts';
import { LossWatch } from '../fleet/loss-watch.ts';
import { mergeResults } from '../report/merge.ts';
import { evaluateThreshold } from '../report/threshold-evaluate.ts';
import type { RunResult, ThresholdResult } from '../result/types.ts';
import type { RunTick } from '../scenario/execute.ts';
import type { ProgressLine } from './progress.ts';
import type { FleetRun } from './run-fleet.ts';
import { runExitCode, writeCiOutputs, writeRunOutputs } from './run-output.ts';
import { type Ending, judge, tell } from './run-verdict.ts';
import { failsForGood } from './thresholds.ts';

/** How long a finished generator waits for the others' results while they are alive. */
const GATHER_WAIT_MS = 120_000;

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
    const due = abortable.filter((t) => tick.elapsedMs >= t.delayAbortEvalMs);
    // The others' snapshots (N of them, gzipped) are read only for a status line or a threshold.
    const others = o.live || due.length > 0 ? await member.othersNow() : [];
    o.live?.update(tick, member.totals(tick));
    if (o.stopped()) return;
    const asked = verdictOf(await member.stopAsked());
    if (asked) return o.abort(asked);
    if (due.length === 0) return;
    const totals = others.length > 0 ? mergeResults([own, ...others]) : own;
    for (const t of due) {
      const verdict = evaluateThreshold(t, totals);
      if (!failsForGood(t, verdict, totals)) continue;
      fleet.breach = { ...verdict, aborted: true };
      member.askStop(JSON.stringify(fleet.breach));
      return o.abort(fleet.breach);
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

/** A stop's verdict as stored: a threshold's result, or nothing usable. */
function verdictOf(text: string | null | undefined): ThresholdResult | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as ThresholdResult;
    return typeof v?.expression === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The threshold that stopped the fleet: as this generator heard it, else as the store keeps it,
 * else as the generator that saw it wrote it into its own result. A stop missed in a store's blip
 * must not let the fleet be judged on figures that read better than what stopped it.
 */
async function fleetBreach(store: FleetStore, parts: FleetPart[], heard: ThresholdResult | undefined) {
  if (heard) return heard;
  const stored = verdictOf(
    await withStore('read whether a threshold stopped the fleet', () => store.stopAsked()),
  );
  return stored ?? parts.flatMap((p) => p.result?.thresholds?.filter((t) => t.aborted) ?? [])[0];
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
    writeShard: (result: RunResult) => { path: string | undefined; written: string[]; failed: boolean };
    stoppedByUser: () => boolean;
    log: (line: string) => void;
  },
): Promise<number> {
  const { member } = fleet;
  const { store, index, generators } = member;
  // A shard's own verdicts are its own figures' (and the breach, if it saw it first), for reading.
  judge(own, { ...o, abortedBy: fleet.breach });
  const shard = o.writeShard(own);
  const alone = (exitCode: number) => tell(own, { ...o, exitCode, path: shard.path, lines: shard.written });
  const userStop = () =>
    alone(runExitCode(own, { interrupted: true, setupFailed: false, writeFailed: shard.failed }));
  try {
    await withStore(
      "store this generator's result",
      () => store.putResult(index, JSON.stringify(own)),
      o.stoppedByUser,
    );
  } catch (error) {
    if (o.stoppedByUser()) return userStop();
    throw error;
  }
  member.stopBeating();
  if (o.stoppedByUser()) return userStop();
  if (o.setupFailure)
    return alone(runExitCode(own, { interrupted: false, setupFailed: true, writeFailed: shard.failed }));
  const held = await gathered(store, o.log, o.stoppedByUser);
  if (!held) return userStop();
  const parts = partsOf(held, store.name);
  const result = fleetResultOf(store.name, generators, parts);
  const abortedBy = await fleetBreach(store, parts, o.abortedBy);
  const comparison = judge(result, { ...o, abortedBy });
  const writer = await store.claim('result').catch(() => false);
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
  return tell(result, { ...o, abortedBy, exitCode, path: written.path, lines });
}

function ciOutputs(config: Ending['config']): { junit?: string; summaryMd?: string } {
  const { junit, summaryMd } = config.outputs;
  return { ...(junit ? { junit } : {}), ...(summaryMd ? { summaryMd } : {}) };
}

/**
 * Every shard's result or its loss (no result, silent past 5 s, as this generator saw it itself);
 * undefined when its user stops it waiting.
 */
async function gathered(
  store: FleetStore,
  log: (line: string) => void,
  stopped: () => boolean,
): Promise<ShardHeld[] | undefined> {
  const deadline = now() + GATHER_WAIT_MS;
  const watch = new LossWatch();
  let said = false;
  let away = 0;
  while (!stopped()) {
    try {
      const shards = await store.shards(false);
      watch.seen(shards);
      away = 0;
      const waiting = shards.filter((s) => !s.stored && !watch.lost(s));
      if (waiting.length === 0 || now() > deadline) return await store.shards(true);
      if (!said)
        log(`waiting for the fleet's other results (generator ${waiting.map((s) => s.index).join(', ')})`);
      said = true;
    } catch {
      // The store away: asked again until it is back, for as long as any store call is.
      watch.storeAway();
      away ||= now();
      if (now() - away > 10_000 || now() > deadline)
        throw new InputError(
          "the fleet's store did not answer while this generator waited for the others' results",
          EXIT.UNREACHABLE,
        );
    }
    await sleepUntil(now() + 200);
  }
  return undefined;
}
