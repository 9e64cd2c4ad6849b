import type { RunResult } from '../result/types.ts';

/** The one line an unverified run carries wherever its figures are read (summary, report, markdown). */
export const UNVERIFIED_LINE =
  "TLS unverified (--insecure): the target's certificate was not checked, so every figure came from a peer that was not proven to be the target";

/**
 * How the requests reached the target, in a line each, when not as Node does by default: TLS trust,
 * a client certificate, a proxy, and the protocol of the responses when HTTP/2 was offered or found.
 */
export function describeNetwork(result: RunResult): string[] {
  const n = result.config.network;
  const protocols = result.overall.protocols ?? {};
  const lines: string[] = [];
  if (n?.insecure) lines.push(UNVERIFIED_LINE);
  const tls = [
    n?.ca && 'the target verified against --ca',
    n?.clientCertificate && 'a client certificate presented',
  ];
  const said = tls.filter((t): t is string => typeof t === 'string');
  if (said.length > 0) lines.push(`TLS: ${said.join('; ')}`);
  if (n?.proxy) lines.push(`through proxy ${n.proxy}`);
  if (n?.http2 || protocols['HTTP/2'])
    lines.push(`protocols: ${describeProtocols(protocols, n?.http2 === true)}`);
  return lines;
}

/** e.g. "HTTP/2 1,204 responses, HTTP/1.1 0 (h2 offered)". */
export function describeProtocols(protocols: Record<string, number>, offered: boolean): string {
  const h2 = protocols['HTTP/2'] ?? 0;
  const h1 = protocols['HTTP/1.1'] ?? 0;
  const counts = `HTTP/2 ${h2.toLocaleString('en-US')}, HTTP/1.1 ${h1.toLocaleString('en-US')} responses`;
  if (!offered) return counts;
  return h2 === 0 && h1 > 0 ? `${counts} (h2 offered; the target did not take it)` : `${counts} (h2 offered)`;
}
