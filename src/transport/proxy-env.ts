import { BlockList, isIP } from 'node:net';

/** The proxy a target's requests go through, and where that was said. */
export interface ProxyChoice {
  url: string;
  /** `--proxy`, or the environment variable that named it. */
  from: string;
}

/**
 * The proxy for `target` from the environment, read as curl and Go (k6) read it: `https_proxy` or
 * `HTTPS_PROXY` for an https target, `http_proxy` or `HTTP_PROXY` for an http one (an https target
 * does not fall back to HTTP_PROXY), unless `no_proxy`/`NO_PROXY` covers the target.
 */
export function proxyFromEnv(target: URL, env: NodeJS.ProcessEnv): ProxyChoice | undefined {
  const names = target.protocol === 'https:' ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
  const name = names.find((n) => env[n]);
  if (!name) return undefined;
  const noProxy = env.no_proxy ?? env.NO_PROXY;
  if (noProxy !== undefined && bypasses(target, noProxy)) return undefined;
  return { url: env[name] as string, from: name };
}

/**
 * Whether a NO_PROXY list covers the target: `*`, a host name (itself and its subdomains, a leading
 * dot or `*.` allowed), an IP address or a CIDR block, each optionally with `:port`.
 */
export function bypasses(target: URL, noProxy: string): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  return noProxy
    .split(/[\s,]+/)
    .filter(Boolean)
    .some((entry) => entry === '*' || covers(entry.toLowerCase(), host, port));
}

function covers(entry: string, host: string, port: string): boolean {
  const { name, port: entryPort } = splitPort(entry);
  if (entryPort !== undefined && entryPort !== port) return false;
  if (name.includes('/')) return inCidr(host, name);
  if (isIP(name)) return name === host;
  const domain = name.replace(/^\*?\./, '');
  return host === domain || host.endsWith(`.${domain}`);
}

function splitPort(entry: string): { name: string; port?: string } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1] as string, ...(bracketed[2] ? { port: bracketed[2] } : {}) };
  // More than one colon with no brackets: an IPv6 address (or block), with no port.
  const colons = entry.split(':').length - 1;
  if (colons === 1) {
    const [name, port] = entry.split(':') as [string, string];
    return { name, port };
  }
  return { name: entry };
}

function inCidr(host: string, cidr: string): boolean {
  const family = isIP(host);
  const [network, bits] = cidr.split('/') as [string, string];
  if (!family || isIP(network) !== family || !/^\d+$/.test(bits)) return false;
  const list = new BlockList();
  try {
    list.addSubnet(network, Number(bits), family === 6 ? 'ipv6' : 'ipv4');
  } catch {
    return false;
  }
  return list.check(host, family === 6 ? 'ipv6' : 'ipv4');
}
