import type { PacingCause } from '../api/pacing-causes.ts';
import type { FleetTotals } from '../fleet/fleet-member.ts';
import type { RunTick } from '../scenario/execute.ts';

const seconds = (ms: number) => `${Math.max(0, Math.round(ms / 1000))}s`;
const left = (until: number) => `${Math.max(0, (until - Date.now()) / 1000).toFixed(1)} s left`;

/**
 * What holds the run's key back, in what the server said where the server holds it: its told
 * budget in its own fields (`RateLimit remaining=0, reset=10`), a refusal's pause in its words
 * (`Retry-After 12 s`, `backoff after 2 refusals`).
 */
function pacingText(tick: RunTick): string {
  const { cause, until, told } = tick.pacing;
  switch (cause) {
    case 'ready':
      return 'sending';
    case 'pacing':
      return 'pacing to the plan';
    case 'budget':
      // Infinity: raw mode past the budget by the ban guard's overshoot, until an answer comes.
      return `held by the server's told budget${told ? ` (${told})` : ''}: ${Number.isFinite(until) ? left(until) : 'waiting for an answer'}`;
    case 'inflight':
      return 'waiting on requests in flight';
    case 'pause':
      return `paused after a refusal (${told ? `${told}; ` : ''}${left(until)})`;
  }
}

/**
 * One word for what holds keys back, as a count of keys reads them: they come last on a line the
 * terminal's width cuts, after some 70 characters of figures.
 */
const KEY_CAUSES: readonly [PacingCause, string][] = [
  ['ready', 'sending'],
  ['pacing', 'pacing'],
  ['budget', 'spent'],
  ['pause', 'paused'],
  ['inflight', 'waiting'],
];

/** A tenant mix's keys by what holds them back: `keys 1180 sending, 20 paused`. */
function keysText(keys: Readonly<Record<PacingCause, number>>): string {
  const parts = KEY_CAUSES.filter(([cause]) => keys[cause] > 0).map(
    ([cause, words]) => `${keys[cause]} ${words}`,
  );
  return `keys ${parts.join(', ')}`;
}

/** One status line: where the run is, how fast, how well, what holds it back, and its fleet's totals. */
export function formatProgress(tick: RunTick, fleet?: FleetTotals): string {
  const own = [
    `${seconds(tick.elapsedMs)}/${seconds(tick.durationMs)}`,
    `${tick.rate.toFixed(1)} req/s`,
    `p99 ${tick.p99Ms.toFixed(1)} ms`,
    `${tick.requests} requests`,
    `${tick.rateLimited} 429s`,
    `${tick.errors} errors`,
    tick.keys ? keysText(tick.keys()) : pacingText(tick),
  ].join('  ');
  if (!fleet) return own;
  // The fleet's figures first: the terminal's width cuts the line's end.
  return `fleet of ${fleet.generators}: ${fleet.requests} requests ${fleet.rateLimited} 429s ${fleet.errors} errors | this one: ${own}`;
}

/**
 * The live status line, rewritten in place once a second on a terminal. Nothing at all when the
 * stream is not a TTY (a CI log would fill with carriage returns) or the run is quiet.
 */
export class ProgressLine {
  private shown = false;
  private readonly stream: NodeJS.WriteStream;

  constructor(stream: NodeJS.WriteStream = process.stderr) {
    this.stream = stream;
  }

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  update(tick: RunTick, fleet?: FleetTotals): void {
    if (!this.enabled) return;
    // A pseudo-terminal may report 0 columns: take that as unknown, not as no room.
    const width = Math.max(20, (this.stream.columns || 100) - 1);
    this.stream.write(`\r\x1b[2K${formatProgress(tick, fleet).slice(0, width)}`);
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[2K');
    this.shown = false;
  }
}
