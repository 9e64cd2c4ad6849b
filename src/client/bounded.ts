import type { ApiClient } from './client.ts';
import { after, now } from './clock.ts';
import { AbortedError } from './gate.ts';

/** A phase that ran out of its time: its waits and requests were cut. */
export class PhaseTimeout extends Error {
  readonly limitMs: number;

  constructor(limitMs: number) {
    super(`did not finish within ${limitMs / 1000} s`);
    this.limitMs = limitMs;
  }
}

/**
 * Runs one phase of a client's traffic (a scenario's setup or teardown, bench's preparation) within
 * `limitMs`: sends the client would hold past it fail at once, at it
 * every wait and request still open is cut, and the run's signal cuts them too. The phase's own
 * code may wait on anything: the race ends the phase for the run even then.
 */
export async function bounded<T>(
  client: ApiClient,
  limitMs: number,
  signal: AbortSignal,
  phase: () => Promise<T>,
): Promise<T> {
  if (signal.aborted) throw new AbortedError('run stopped');
  client.closeAt(now() + limitMs);
  let cancel = () => {};
  const ended = new Promise<never>((_, reject) => {
    const cut = (error: Error) => {
      client.interrupt();
      reject(error);
    };
    const onSignal = () => cut(new AbortedError('run stopped'));
    const cancelTimer = after(limitMs, () => cut(new PhaseTimeout(limitMs)));
    signal.addEventListener('abort', onSignal, { once: true });
    cancel = () => {
      cancelTimer();
      signal.removeEventListener('abort', onSignal);
    };
  });
  try {
    return await Promise.race([phase(), ended]);
  } finally {
    cancel();
    client.closeAt(Number.POSITIVE_INFINITY);
  }
}
