import { errorCount } from '../record/errors.ts';
import type { RunResult } from '../result/types.ts';
import { type FleetStore, LOST_AFTER_MS, type ShardHeld } from './fleet-store.ts';

/** A heartbeat a fifth of the silence that makes a generator lost: four may fail before it is. */
const BEAT_MS = LOST_AFTER_MS / 5;

/** The fleet's totals as the status line shows them beside the generator's own. */
export interface FleetTotals {
  generators: number;
  requests: number;
  rateLimited: number;
  errors: number;
}

/**
 * One generator's life in its fleet while it runs: a heartbeat from joining to the end (the store's
 * clock times its silence), its result as it stands published once a second (the fleet's live
 * figures, and the checkpoint a lost generator leaves behind), the others' snapshots for the
 * fleet's totals, and a stop asked by any of them. The store may be away: every call here is
 * best effort, said once in a line, and the run's quota goes on failing closed on its own.
 */
export class FleetMember {
  private timer: NodeJS.Timeout | undefined;
  private publishing = false;
  private said = false;
  /** The others' latest snapshots, as last read. */
  private others: RunResult[] = [];

  readonly store: FleetStore;
  readonly index: number;
  readonly generators: number;
  private readonly log: (line: string) => void;

  // Fields assigned by hand, not as parameter properties: erasable syntax, which Node strips itself.
  constructor(store: FleetStore, index: number, generators: number, log: (line: string) => void) {
    this.store = store;
    this.index = index;
    this.generators = generators;
    this.log = log;
  }

  startBeating(): void {
    const beat = () => this.store.beat(this.index).catch(() => this.away());
    void beat();
    this.timer = setInterval(beat, BEAT_MS);
    // A heartbeat never keeps a finished generator alive.
    this.timer.unref();
  }

  stopBeating(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Publishes this generator's snapshot, unless the last one is still on its way. */
  publish(snapshot: RunResult): void {
    if (this.publishing) return;
    this.publishing = true;
    this.store
      .putSnapshot(this.index, JSON.stringify(snapshot))
      .catch(() => this.away())
      .finally(() => {
        this.publishing = false;
      });
  }

  /** The other generators' latest snapshots (a stale read when the store is away). */
  async othersNow(): Promise<RunResult[]> {
    try {
      const held = await this.store.shards(true);
      this.others = held.filter((h) => h.index !== this.index).flatMap((h) => snapshotOf(h));
    } catch {
      this.away();
    }
    return this.others;
  }

  /** The fleet's totals: this generator's figures and the others' last snapshots. */
  totals(own: { requests: number; rateLimited: number; errors: number }): FleetTotals {
    const t = { generators: this.generators, ...own };
    for (const r of this.others) {
      t.requests += r.overall.requests;
      t.rateLimited += r.overall.rateLimited;
      t.errors += errorCount(r.overall);
    }
    return t;
  }

  async stopAsked(): Promise<string | undefined> {
    try {
      return (await this.store.stopAsked()) ?? undefined;
    } catch {
      this.away();
      return undefined;
    }
  }

  askStop(reason: string): void {
    this.store.askStop(reason).catch(() => this.away());
  }

  private away(): void {
    if (this.said) return;
    this.said = true;
    this.log(
      "the fleet's store did not answer: the fleet's live figures wait for it, and sends wait for the quota",
    );
  }
}

function snapshotOf(h: ShardHeld): RunResult[] {
  const text = h.result ?? h.snapshot;
  if (!text) return [];
  try {
    return [JSON.parse(text) as RunResult];
  } catch {
    return [];
  }
}
