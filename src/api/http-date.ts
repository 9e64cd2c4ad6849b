const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
// RFC 9110 section 5.6.7: the one form a sender may generate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;

/** Formats a date as IMF-fixdate, the HTTP-date form RFC 9110 requires senders to use. */
export function formatHttpDate(date: Date): string {
  return date.toUTCString();
}

/**
 * Parses an IMF-fixdate strictly: the checks must tell a conforming `Sunset` or `Retry-After` date
 * from the obsolete RFC 850 and asctime forms, which `Date.parse` would accept silently.
 */
export function parseHttpDate(value: string): Date | undefined {
  const m = IMF_FIXDATE.exec(value.trim());
  if (!m) return undefined;
  const [, day, dd, mon, yyyy, hh, mi, ss] = m as unknown as string[];
  const month = MONTHS.indexOf(mon as string);
  const ms = Date.UTC(Number(yyyy), month, Number(dd), Number(hh), Number(mi), Number(ss));
  const date = new Date(ms);
  // Rejects 31 Feb and a weekday that does not match the date.
  if (date.getUTCDate() !== Number(dd) || DAYS[date.getUTCDay()] !== day || Number(hh) > 23) return undefined;
  if (Number(mi) > 59 || Number(ss) > 60) return undefined;
  return date;
}
