import { performance } from 'node:perf_hooks';

/**
 * Wall-clock milliseconds with sub-millisecond resolution. Pacing compares our send times with the
 * server's `X-RateLimit-Reset` (Unix seconds) and `Retry-After`, so it needs the wall clock's origin;
 * it needs performance.now()'s monotonic resolution to space requests a few ms apart.
 */
export const now = (): number => performance.timeOrigin + performance.now();

export function sleepUntil(at: number, signal?: AbortSignal): Promise<void> {
  const delay = at - now();
  if (delay <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, delay);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
