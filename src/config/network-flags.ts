import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Options } from 'yargs';
import { InputError } from '../api/input-error.ts';
import type { NetworkSeen } from '../result/types.ts';
import { type NetworkOptions, publicProxy } from '../transport/network.ts';
import { type ProxyChoice, proxyFromEnv } from '../transport/proxy-env.ts';

/** How requests reach the target, as `run`, `capacity` and `bench` all take it. */
export const NETWORK_FLAGS = {
  ca: {
    requiresArg: true,
    type: 'string',
    describe:
      "PEM file of certificates to trust for an https target, beside Node's own: a private CA's, or a self-signed certificate itself",
  },
  insecure: {
    type: 'boolean',
    default: false,
    describe:
      "Do not verify an https target's certificate (a staging target): the summary and the report say so, since every figure then came from an unverified peer",
  },
  cert: {
    requiresArg: true,
    type: 'string',
    describe: 'PEM file of a client certificate, for a target that asks for one (mutual TLS); with --key',
  },
  key: { requiresArg: true, type: 'string', describe: "PEM file of --cert's private key" },
  'key-passphrase-env': {
    requiresArg: true,
    type: 'string',
    describe: "Name of the environment variable that holds --key's passphrase (never printed)",
  },
  http2: {
    type: 'boolean',
    default: false,
    describe:
      'Offer HTTP/2 to an https target (ALPN h2): a target that takes it answers over HTTP/2, and the result counts the protocol of every response',
  },
  proxy: {
    requiresArg: true,
    type: 'string',
    describe:
      "HTTP proxy for every request, http://[user:password@]HOST:PORT, or 'none'. Default: https_proxy/HTTPS_PROXY for an https target, http_proxy/HTTP_PROXY for an http one, unless no_proxy/NO_PROXY covers it",
  },
} as const satisfies Record<string, Options>;

export interface NetworkArgs {
  ca?: string | undefined;
  insecure?: boolean | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  keyPassphraseEnv?: string | undefined;
  http2?: boolean | undefined;
  proxy?: string | undefined;
}

/** The transport a command's requests use, as resolved from its flags and the environment. */
export interface NetworkConfig {
  /** What the client uses; undefined: Node's defaults, no proxy. */
  readonly options: NetworkOptions | undefined;
  /** What `--print-config` shows: files and where things came from, never a key or passphrase. */
  readonly printable: Record<string, unknown>;
  /** What the result records (config.network). */
  readonly seen: NetworkSeen | undefined;
  /** Where the proxy came from (`--proxy`, or the variable that named it), when one applies. */
  readonly proxyFrom: string | undefined;
  /** Said on stderr before the command starts. */
  readonly warnings: readonly string[];
}

/**
 * `--ca`, `--insecure`, `--cert`, `--key`, `--key-passphrase-env`, `--http2`, `--proxy` and the proxy
 * environment, checked before anything starts: every file read and parsed, the key opened with its
 * passphrase and matched with its certificate. `target`: undefined for the embedded server (plain
 * HTTP on loopback, which the environment's proxy never applies to).
 */
export function networkFlags(
  args: NetworkArgs,
  target: URL | undefined,
  env: NodeJS.ProcessEnv,
): NetworkConfig {
  if (args.ca !== undefined && args.insecure)
    throw new InputError(
      '--ca and --insecure contradict each other: --insecure verifies nothing, --ca what it gives',
    );
  const ca = args.ca === undefined ? undefined : readCertificates(args.ca, '--ca');
  const identity = clientIdentity(args, env);
  const proxy = resolveProxy(args.proxy, target, env);
  const options: NetworkOptions = {
    ...(ca ? { ca: ca.pem } : {}),
    ...(args.insecure ? { insecure: true } : {}),
    ...(identity?.options ?? {}),
    ...(args.http2 ? { http2: true } : {}),
    ...(proxy ? { proxy: proxy.url } : {}),
  };
  const given = Object.keys(options).length > 0;
  const plain = target === undefined || target.protocol !== 'https:';
  const named = [ca && '--ca', args.insecure && '--insecure', identity && '--cert', args.http2 && '--http2'];
  const warnings = plain ? plainTargetWarning(named.filter((n): n is string => typeof n === 'string')) : [];
  return {
    options: given ? options : undefined,
    printable: printableNetwork(args, ca, identity, proxy),
    seen: given ? seenNetwork(args, Boolean(ca), Boolean(identity), proxy) : undefined,
    proxyFrom: proxy?.from,
    warnings,
  };
}

/** TLS flags with a plain-HTTP target: they are taken (a proxy may still matter) and said to do nothing. */
function plainTargetWarning(named: string[]): string[] {
  if (named.length === 0) return [];
  const http2 = named.includes('--http2') ? ' (HTTP/2 is offered through TLS only)' : '';
  return [
    `${named.join(', ')}: the target is plain HTTP, so ${named.length === 1 ? 'it changes' : 'they change'} nothing${http2}`,
  ];
}

function readPem(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(
      `${flag} ${path}: ${code === 'ENOENT' ? 'no such file' : `cannot be read (${code})`}`,
    );
  }
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** A PEM file's certificates, each parsed, so that a wrong file is said now rather than as a TLS failure. */
function readCertificates(path: string, flag: string): { pem: string; count: number } {
  const pem = readPem(path, flag);
  const blocks = pem.match(CERTIFICATE) ?? [];
  if (blocks.length === 0)
    throw new InputError(`${flag} ${path}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  blocks.forEach((block, i) => {
    try {
      new X509Certificate(block);
    } catch {
      throw new InputError(`${flag} ${path}: certificate ${i + 1} of ${blocks.length} cannot be parsed`);
    }
  });
  return { pem, count: blocks.length };
}

interface ClientIdentity {
  options: Pick<NetworkOptions, 'cert' | 'key' | 'passphrase'>;
  subject: string;
}

/** `--cert` and `--key` (and the passphrase's variable): read, opened and matched, or undefined. */
function clientIdentity(args: NetworkArgs, env: NodeJS.ProcessEnv): ClientIdentity | undefined {
  if (args.cert === undefined && args.key === undefined) {
    if (args.keyPassphraseEnv !== undefined)
      throw new InputError('--key-passphrase-env needs --cert and --key');
    return undefined;
  }
  // Never echoed: before --key was the client key, bench and capacity took an API key under that name.
  if (args.cert === undefined)
    throw new InputError(
      "--key needs --cert: --key is a client certificate's private key file; an API key is given with --api-key (which bench's and capacity's --key once meant)",
    );
  if (args.key === undefined) throw new InputError("--cert needs --key: the certificate's private key");
  const cert = readCertificates(args.cert, '--cert').pem;
  const key = readPem(args.key, '--key');
  const name = args.keyPassphraseEnv;
  if (name !== undefined && env[name] === undefined)
    throw new InputError(`--key-passphrase-env ${name}: the environment has no ${name}`);
  const passphrase = name === undefined ? undefined : env[name];
  const keyObject = openKey(key, args.key, passphrase);
  const certificate = new X509Certificate(cert);
  if (!certificate.checkPrivateKey(keyObject))
    throw new InputError(`--cert ${args.cert} and --key ${args.key}: the key is not this certificate's`);
  return {
    options: { cert, key, ...(passphrase !== undefined ? { passphrase } : {}) },
    subject: certificate.subject.replace(/\n/g, ', '),
  };
}

function openKey(key: string, path: string, passphrase: string | undefined): KeyObject {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key))
    throw new InputError(`--key ${path}: holds no PEM private key (-----BEGIN PRIVATE KEY-----)`);
  try {
    return createPrivateKey(passphrase === undefined ? { key } : { key, passphrase });
  } catch {
    if (passphrase === undefined && /ENCRYPTED/.test(key))
      throw new InputError(
        `--key ${path}: the key is encrypted; name the variable that holds its passphrase with --key-passphrase-env NAME`,
      );
    throw new InputError(
      passphrase === undefined
        ? `--key ${path}: the private key cannot be read`
        : `--key ${path}: the private key cannot be opened with the passphrase given (wrong passphrase?)`,
    );
  }
}

/** `--proxy URL`, `--proxy none`, or the environment's proxy for this target. */
function resolveProxy(
  flag: string | undefined,
  target: URL | undefined,
  env: NodeJS.ProcessEnv,
): ProxyChoice | undefined {
  if (flag === 'none') return undefined;
  if (flag === undefined) return target ? checkedProxy(proxyFromEnv(target, env)) : undefined;
  return checkedProxy({ url: flag, from: '--proxy' });
}

function checkedProxy(choice: ProxyChoice | undefined): ProxyChoice | undefined {
  if (!choice) return undefined;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(choice.url) ? choice.url : `http://${choice.url}`);
  } catch {
    throw new InputError(`${choice.from}: not a proxy URL (want http://HOST:PORT)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InputError(
      `${choice.from}: a ${url.protocol.replace(':', '')} proxy is not supported (want http:// or https://)`,
    );
  return { url: url.href, from: choice.from };
}

function printableNetwork(
  args: NetworkArgs,
  ca: { count: number } | undefined,
  identity: ClientIdentity | undefined,
  proxy: ProxyChoice | undefined,
): Record<string, unknown> {
  return {
    ...(ca ? { ca: `${args.ca} (${ca.count} certificate${ca.count === 1 ? '' : 's'})` } : {}),
    ...(args.insecure ? { insecure: "the target's certificate is not verified" } : {}),
    ...(identity
      ? {
          clientCertificate: `${args.cert} (${identity.subject})`,
          key: `${args.key}${args.keyPassphraseEnv ? ` (passphrase from $${args.keyPassphraseEnv})` : ''}`,
        }
      : {}),
    ...(args.http2 ? { http2: 'offered (ALPN h2)' } : {}),
    proxy: proxy ? `${publicProxy(proxy.url)} (from ${proxy.from})` : 'none',
  };
}

function seenNetwork(
  args: NetworkArgs,
  ca: boolean,
  clientCertificate: boolean,
  proxy: ProxyChoice | undefined,
): NetworkSeen {
  return {
    ...(ca ? { ca: true } : {}),
    ...(args.insecure ? { insecure: true } : {}),
    ...(clientCertificate ? { clientCertificate: true } : {}),
    ...(args.http2 ? { http2: true } : {}),
    ...(proxy ? { proxy: publicProxy(proxy.url) } : {}),
  };
}
