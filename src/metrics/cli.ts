import type { LiveMetrics } from './live-metrics.ts';

/** A run ends within this of its end while its sinks send what they hold... */
const STOP_DEADLINE_MS = 3000;
/** ...and within this after Ctrl-C, which promises the process ends within 2 s of the signal. */
const INTERRUPTED_STOP_DEADLINE_MS = 500;

/**
 * Ends the push and says where the metrics went, on stderr (quiet or not when samples were dropped).
 * Never throws and never changes the exit code.
 */
export async function stopMetrics(
  metrics: LiveMetrics | undefined,
  o: { interrupted: boolean; quiet: boolean },
): Promise<void> {
  if (!metrics) return;
  try {
    const lines = await metrics.stop(o.interrupted ? INTERRUPTED_STOP_DEADLINE_MS : STOP_DEADLINE_MS);
    for (const line of lines)
      if (!o.quiet || line.dropped > 0) process.stderr.write(`petstore-load: ${line.text}\n`);
  } catch (error) {
    process.stderr.write(`petstore-load: metrics: not sent (${(error as Error).message})\n`);
  }
}
