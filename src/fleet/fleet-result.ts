import { formatInstant } from '../api/duration.ts';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { mergeResults } from '../report/merge.ts';
import { resultFromJson } from '../report/result-input.ts';
import type { FleetMeta, FleetShardMeta, RunResult } from '../result/types.ts';
import type { ShardHeld } from './fleet-store.ts';

/** One shard as the fleet's result counts it: its final result, else its last checkpoint, if any. */
export interface FleetPart {
  index: number;
  host: string | undefined;
  state: FleetShardMeta['state'];
  result: RunResult | undefined;
}

/**
 * The shards as the store holds them, read as results: a shard with a final result finished (or was
 * interrupted, its result says so); one without is lost, and its latest snapshot stands for it.
 * A stored text that is not a result is refused with a line naming the shard.
 */
export function partsOf(held: ShardHeld[], fleet: string): FleetPart[] {
  const read = (text: string | undefined, what: string) => {
    if (text === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new InputError(`fleet ${fleet}: ${what} in the store is not JSON`, EXIT.UNREACHABLE);
    }
    return resultFromJson(value, `fleet ${fleet}: ${what}`);
  };
  return held.map((h) => {
    const final = read(h.result, `generator ${h.index}'s result`);
    // A fleet stopped by a threshold ends every shard early: that is the verdict, not a shard gone.
    const stopped = final?.meta.partial && !final.meta.interruptedBy?.startsWith('threshold ');
    if (final)
      return { index: h.index, host: h.host, state: stopped ? 'interrupted' : 'finished', result: final };
    return {
      index: h.index,
      host: h.host,
      state: 'lost',
      result: read(h.snapshot, `generator ${h.index}'s checkpoint`),
    };
  });
}

/**
 * The fleet's result: its shards merged (histograms added, so its percentiles are the fleet's), and
 * `meta.fleet` naming every shard, its host, its span, its count and its part of the workload. A
 * lost shard makes it partial, and the reason names the shard and what part of the load it carried.
 */
export function fleetResultOf(name: string, generators: number, parts: FleetPart[]): RunResult {
  const counted = parts.filter((p): p is FleetPart & { result: RunResult } => p.result !== undefined);
  if (counted.length === 0)
    throw new InputError(
      `fleet ${name}: no generator left a result or a checkpoint in the store`,
      EXIT.UNREACHABLE,
    );
  const merged = mergeResults(
    counted.map((p) => p.result),
    counted.map((p) => `fleet ${name}: generator ${p.index}`),
  );
  const share = 1 / generators;
  const fleet: FleetMeta = {
    name,
    generators,
    lost: parts.filter((p) => p.state === 'lost').map((p) => p.index),
    shards: parts.map((p) => ({
      index: p.index,
      ...(p.host ? { host: p.host } : {}),
      state: p.state,
      ...(p.result ? { startedAt: p.result.meta.startedAt, endedAt: p.result.meta.endedAt } : {}),
      requests: p.result?.overall.requests ?? 0,
      share: Math.round(share * 1e4) / 1e4,
    })),
  };
  const { checkpoint: _checkpoint, shard: _shard, ...meta } = merged.meta;
  merged.meta = { ...meta, fleet };
  const missing = parts.filter((p) => p.state !== 'finished');
  if (missing.length > 0) {
    merged.meta.partial = true;
    merged.meta.interruptedBy = incompleteLine(missing, generators);
  }
  return merged;
}

/** The fleet lacks part of its load: a generator lost, or stopped by its user. */
export function incomplete(result: RunResult): boolean {
  return result.meta.fleet?.shards.some((s) => s.state !== 'finished') ?? false;
}

/** What the fleet lacks, in words: which generators, what they carried, what of theirs is counted. */
function incompleteLine(missing: FleetPart[], generators: number): string {
  const each = missing.map((p) => {
    const who = `generator ${p.index} of ${generators}${p.host ? ` (${p.host})` : ''}`;
    const upTo = p.result && formatInstant(Date.parse(p.result.meta.endedAt));
    if (p.state === 'interrupted')
      return `${who} was stopped (${p.result?.meta.interruptedBy ?? 'interrupted'}) at ${upTo}: it carried 1/${generators} of the workload`;
    const kept = p.result
      ? `its checkpoint up to ${upTo} is counted (${p.result.overall.requests} requests)`
      : 'nothing of it is counted';
    return `${who} lost: it carried 1/${generators} of the workload; ${kept}`;
  });
  return `fleet incomplete: ${each.join('; ')}`;
}
