import { InputError } from '../api/input-error.ts';

/** `--base-url`, as every command reads it: an http(s) URL, or one line saying why not. */
export function parseBaseUrl(text: string, flag = '--base-url'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`${flag}: '${text}' is not a URL`);
  }
  if (!/^https?:$/.test(url.protocol)) throw new InputError(`${flag} must be http:// or https://`);
  return url;
}

/** Base URL without credentials, query or fragment: what a result and a message may show. */
export function publicTarget(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
}
