import { InputError } from '../api/input-error.ts';
import type { RemoteWriteEndpoint } from './remote-write.ts';

/** Where `--metrics` sends: today Prometheus remote write only; the `kind=` leaves room for others. */
export interface SinkSpec {
  kind: 'prometheus';
  endpoint: RemoteWriteEndpoint;
  /** Host and port: what a message may show (no credentials, path or query). */
  host: string;
}

const KINDS = ['prometheus'] as const;

/**
 * `--metrics prometheus=URL`, repeatable. A URL's userinfo becomes basic auth for the push and is
 * never shown: errors name the flag and the fault, never the text given.
 */
export function parseMetricsFlags(values: readonly string[]): SinkSpec[] {
  const sinks = values.map((value) => {
    const eq = value.indexOf('=');
    const kind = eq < 0 ? value : value.slice(0, eq);
    if (!(KINDS as readonly string[]).includes(kind))
      throw new InputError(
        // Only a word is echoed: a URL given without `prometheus=` may carry a password before its first `=`.
        `--metrics: ${eq < 0 || !/^[a-z][a-z0-9_-]{0,19}$/i.test(kind) ? 'expected KIND=URL' : `unknown sink '${kind}'`} (known: prometheus=URL, e.g. prometheus=http://127.0.0.1:9090/api/v1/write)`,
      );
    let url: URL;
    try {
      url = new URL(value.slice(eq + 1));
    } catch {
      throw new InputError(
        `--metrics ${kind}: not a URL (e.g. prometheus=http://127.0.0.1:9090/api/v1/write)`,
      );
    }
    if (!/^https?:$/.test(url.protocol))
      throw new InputError(`--metrics ${kind}: the URL must be http:// or https://`);
    return { kind: 'prometheus', endpoint: endpointOf(url), host: url.host } as SinkSpec;
  });
  // One endpoint twice would get every sample twice, its own dropped counter with two values.
  const urls = sinks.map((s) => s.endpoint.url.href);
  if (new Set(urls).size < urls.length) throw new InputError('--metrics: the same endpoint is given twice');
  return sinks;
}

function endpointOf(url: URL): RemoteWriteEndpoint {
  const bare = new URL(url.href);
  bare.username = '';
  bare.password = '';
  bare.hash = '';
  if (url.username === '' && url.password === '') return { url: bare };
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return { url: bare, authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}
