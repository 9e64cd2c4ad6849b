import type { StoreOutageSeen } from './types.ts';

/**
 * Store outages on the wall clock (epoch ms; `to` absent while one never ended) as a result keeps
 * them: seconds from `startedAt`, and how pacing resumed only for an outage that ended.
 */
export function outagesFromStart(
  outages: readonly (Omit<StoreOutageSeen, 'to'> & { to?: number | undefined })[],
  startedAt: number,
): StoreOutageSeen[] {
  const seconds = (at: number) => Math.max(0, Math.round(at - startedAt) / 1000);
  return outages.map((o) => ({
    from: seconds(o.from),
    ...(o.to === undefined ? {} : { to: seconds(o.to) }),
    held: o.held,
    sentWithout: o.sentWithout,
    ...(o.resumed === undefined || o.to === undefined ? {} : { resumed: o.resumed }),
  }));
}
