import { type Family, familyOf } from '../model.ts';
import type { ProbeReply, Shot } from '../probe-client.ts';

/**
 * Some gateways count every request they see, refused or not, in a sliding window: a refusal then
 * stays in the window as long as an admitted request does. The probe's own refusals before the
 * quota's return (the burst's 429, return probes sent too early where no wait was announced) still
 * hold their places when it comes back, so fewer come back at once than the window's limit, by as
 * many as the probe was refused within the window: read alone, that looks like a bucket refilling
 * one request at a time.
 */

/** Refusals the probe met within a window before `back` was sent: the places they may still hold. */
export function refusedWithinWindow(
  shots: readonly Shot[] | undefined,
  back: ProbeReply | undefined,
  windowMs: number,
): number {
  if (!shots || !back) return 0;
  return shots.filter((s) => !s.admitted && s.at < back.sentAt && s.at > back.sentAt - windowMs).length;
}

/**
 * A window when what came back at once, with the places the probe's own refusals may hold, is the
 * whole limit (and no more); a bucket, or a GCRA whose burst is one, gives back one request at a
 * time however often it was refused: one back is never read as a window.
 */
export function familyWithRefusals(atOnce: number | null, limit: number, refused: number): Family {
  const alone = familyOf(atOnce, limit);
  if (alone !== 'spacing' || atOnce === null || atOnce < 2 || refused === 0) return alone;
  return atOnce + refused <= limit ? familyOf(atOnce + refused, limit) : alone;
}

/**
 * The evidence line when the shortfall at the return is exactly the refusals within the window:
 * refusals count. Null when nothing fell short, or the shortfall is not theirs.
 */
export function refusalsCountEvidence(atOnce: number | null, limit: number, refused: number): string | null {
  if (atOnce === null || refused === 0) return null;
  const short = limit - atOnce;
  if (short < 1 || short !== refused) return null;
  return `${atOnce} of ${limit} came back at once, ${short} short: as many as the probe's ${refused} refusal(s) within the window before, which the limiter still counted (it counts refused requests too)`;
}
