/**
 * What holds a key's next request back: nothing (`ready`), even spacing (`pacing`), the server's
 * remaining budget (`budget`), a 429's pause (`pause`), or requests in flight that must answer
 * first (`inflight`). The client decides it; the status line and the metrics name it.
 */
export const PACING_CAUSES = ['ready', 'pacing', 'budget', 'pause', 'inflight'] as const;
export type PacingCause = (typeof PACING_CAUSES)[number];
