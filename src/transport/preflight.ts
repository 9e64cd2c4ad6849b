import { isIP, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { type NetworkOptions, publicProxy, tlsOptions } from './network.ts';
import { tlsFailureWords } from './tls-failure.ts';

/**
 * Why the target cannot be reached, in words, or undefined when it can: checked before a run, so that
 * "unreachable" (exit 3) is said before any traffic. A connection, never a request (checking the
 * target must not spend its quota): TCP to the target, or to the proxy in front of it; for an https
 * target reached directly, the TLS handshake too, with the run's own TLS options, so that a
 * certificate the run would refuse is said now, with the flag that addresses it.
 */
export async function targetProblem(
  url: URL,
  network?: NetworkOptions,
  timeoutMs = 3000,
): Promise<string | undefined> {
  if (network?.proxy) {
    const proxy = new URL(network.proxy);
    const problem = await handshake(proxy, undefined, timeoutMs);
    return problem === undefined
      ? undefined
      : `is behind proxy ${publicProxy(network.proxy)}, which ${problem}`;
  }
  return handshake(url, url.protocol === 'https:' ? (tlsOptions(network) ?? {}) : undefined, timeoutMs);
}

function handshake(url: URL, tls: object | undefined, timeoutMs: number): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Promise((done) => {
    const socket = tls
      ? tlsConnect({ host, port, timeout: timeoutMs, ...(isIP(host) ? {} : { servername: host }), ...tls })
      : tcpConnect({ host, port, timeout: timeoutMs });
    const finish = (problem: string | undefined) => {
      socket.destroy();
      done(problem);
    };
    socket.once(tls ? 'secureConnect' : 'connect', () => finish(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => finish(describe(error)));
    socket.once('timeout', () => finish(`is unreachable (no connection within ${timeoutMs / 1000} s)`));
  });
}

function describe(error: NodeJS.ErrnoException): string {
  const code = error.code ?? 'unknown';
  const words = tlsFailureWords(code);
  if (words) return `failed TLS: ${words} (${code})`;
  return `is unreachable (${code})`;
}
