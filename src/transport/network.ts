import { rootCertificates } from 'node:tls';

/**
 * How requests reach the target: whom to trust, who we are, HTTP/2, a proxy. Resolved once from the
 * flags and the environment (src/config/network-flags.ts); plain data, so that worker threads get the
 * same transport as the main thread. The PEM texts and the passphrase are never printed or written.
 */
export interface NetworkOptions {
  /** PEM certificates (one or several) trusted beside Node's own roots: `--ca`. */
  ca?: string;
  /** `--insecure`: the target's certificate is not verified. */
  insecure?: boolean;
  /** A client certificate and its key, PEM (`--cert`, `--key`), and the key's passphrase. */
  cert?: string;
  key?: string;
  passphrase?: string;
  /** `--http2`: offer h2 in ALPN; a server that takes it answers over HTTP/2. */
  http2?: boolean;
  /** The proxy requests go through (its URL, user:password@ allowed), when one applies to the target. */
  proxy?: string;
}

/** Node's TLS options for the target's connections; undefined when nothing differs from Node's defaults. */
export function tlsOptions(network: NetworkOptions | undefined): TlsOptions | undefined {
  if (!network) return undefined;
  const options: TlsOptions = {};
  // A CA of one's own is trusted beside the public roots, as NODE_EXTRA_CA_CERTS does, not instead.
  if (network.ca) options.ca = [...rootCertificates, network.ca];
  if (network.insecure) options.rejectUnauthorized = false;
  if (network.cert) options.cert = network.cert;
  if (network.key) options.key = network.key;
  if (network.passphrase !== undefined) options.passphrase = network.passphrase;
  return Object.keys(options).length > 0 ? options : undefined;
}

export interface TlsOptions {
  ca?: string[];
  rejectUnauthorized?: boolean;
  cert?: string;
  key?: string;
  passphrase?: string;
}

/** The proxy's URL as it may be shown: its origin, never its credentials. */
export function publicProxy(url: string): string {
  return new URL(url).origin;
}
