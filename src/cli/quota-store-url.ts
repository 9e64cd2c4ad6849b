import { InputError } from '../api/input-error.ts';

/** A Redis URL for --quota-store, and how results name it: no user, no password. */
export function parseQuotaStoreUrl(text: string): { url: string; label: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`--quota-store: '${text}' is not a URL (expected redis://HOST:PORT)`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new InputError(
      `--quota-store: only redis:// and rediss:// stores are supported, got '${url.protocol}'`,
    );
  return { url: url.href, label: `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}` };
}
