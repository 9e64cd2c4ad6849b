import type { StoreOutageSeen } from '../result/types.ts';

const RESUMED: Record<NonNullable<StoreOutageSeen['resumed']>, string> = {
  intact: "the store held the key's reservations (kept, or written back by another generator)",
  server: "pacing resumed from the server's Remaining",
  held: 'the store had forgotten its reservations and the server told none: one window was waited out',
  'local-share': 'each generator paced alone at its share of the plan meanwhile',
};

/** One outage of the shared quota store, in the words of the summary. */
export function describeStoreOutage(o: StoreOutageSeen): string {
  const sent = `${o.sentWithout} request${o.sentWithout === 1 ? '' : 's'} sent without it`;
  const held = `${o.held} held`;
  if (o.to === undefined)
    return `quota store unreachable from ${o.from.toFixed(1)} s to the end of the run: ${sent}, ${held}`;
  return `quota store unreachable ${o.from.toFixed(1)} s to ${o.to.toFixed(1)} s: ${sent}, ${held}${o.resumed ? `; ${RESUMED[o.resumed]}` : ''}`;
}
