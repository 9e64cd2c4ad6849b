import { type KeyQuota, type PauseBand, type QuotaPoint, unionPauses } from '../record/quota-timeline.ts';

export interface QuotaPart {
  /** Absent in results of older versions: such a part adds nothing. */
  quota: KeyQuota[] | undefined;
  /** Epoch ms the part's seconds count from (its meta.startedAt). */
  start: number;
}

interface Merging {
  parts: number;
  limit: number;
  points: Map<number, QuotaPoint>;
  pauses: PauseBand[];
  dropped: number;
}

const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * The parts' quota timelines on one clock, key by key: a point lands in the merged second it
 * overlaps most (as mergeTimelines places them), pauses move by the part's offset to the exact ms.
 * Parts on one key share its quota (workers, shards on one store), so in a second: requests and
 * 429s add up, the lowest Remaining is the lowest of the parts', and so is the last one, since
 * within a window the later announcement is the lower (the parts' order inside a second is lost);
 * a reset seen by any part is a reset, and the resets several parts saw of one window are one (see
 * `oneResetPerWindow`). Pauses are unioned, overlapping ones joined into one band. Undefined when no
 * part has a quota timeline. `windowSeconds`: the plan's shortest window (the parts share it).
 */
export function mergeQuota(
  parts: QuotaPart[],
  start: number,
  windowSeconds: number | undefined,
): KeyQuota[] | undefined {
  if (parts.every((p) => p.quota === undefined)) return undefined;
  const keys = new Map<string, Merging>();
  for (const part of parts) {
    const offset = (part.start - start) / 1000;
    for (const k of part.quota ?? []) {
      let m = keys.get(k.key);
      if (!m) {
        m = { parts: 0, limit: Number.NaN, points: new Map(), pauses: [], dropped: 0 };
        keys.set(k.key, m);
      }
      m.parts++;
      if (k.limit !== undefined && !(k.limit <= m.limit)) m.limit = k.limit;
      for (const p of k.points) addPoint(m.points, Math.max(0, Math.round(offset + p.t)), p);
      for (const b of k.pauses)
        m.pauses.push({
          ...b,
          from: Math.max(0, ms(b.from + offset)),
          until: Math.max(0, ms(b.until + offset)),
        });
      m.dropped += k.droppedPauses ?? 0;
    }
  }
  return [...keys].map(([key, m]) => {
    const { pauses, dropped } = unionPauses(m.pauses);
    const droppedPauses = m.dropped + dropped;
    const points = [...m.points.values()].sort((a, b) => a.t - b.t);
    if (m.parts > 1 && windowSeconds !== undefined) oneResetPerWindow(points, windowSeconds);
    return {
      key,
      ...(Number.isNaN(m.limit) ? {} : { limit: m.limit }),
      points,
      pauses,
      ...(droppedPauses > 0 ? { droppedPauses } : {}),
    };
  });
}

const lower = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

function addPoint(points: Map<number, QuotaPoint>, t: number, p: QuotaPoint): void {
  const m = points.get(t);
  if (!m) {
    points.set(t, { ...p, t });
    return;
  }
  m.requests += p.requests;
  m.rateLimited += p.rateLimited;
  const remainingMin = lower(m.remainingMin, p.remainingMin);
  const remainingLast = lower(m.remainingLast, p.remainingLast);
  if (remainingMin !== undefined) m.remainingMin = remainingMin;
  if (remainingLast !== undefined) m.remainingLast = remainingLast;
  if (p.reset) m.reset = true;
}

/**
 * Each part marks the second its first response of a new window arrived; parts on one key see one
 * window begin a moment apart, which can fall in adjacent seconds. Windows begin a whole window
 * apart, so a reset less than half a window after the one kept is the same window's: only the first
 * stays. (One part's own resets are left as they are.)
 */
function oneResetPerWindow(points: QuotaPoint[], windowSeconds: number): void {
  let kept = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    if (!p.reset) continue;
    if (p.t - kept < windowSeconds / 2) delete p.reset;
    else kept = p.t;
  }
}
