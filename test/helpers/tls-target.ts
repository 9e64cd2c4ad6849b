import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { proxyTarget, startNginx } from './nginx.ts';

/**
 * Certificates made with Debian's openssl for a test, in a directory of their own: a CA, a server
 * certificate it signed for 127.0.0.1 and localhost, a self-signed one, and a client certificate the
 * CA signed whose key is encrypted with `passphrase`. Paths to PEM files.
 */
export interface TestCertificates {
  dir: string;
  ca: string;
  server: { cert: string; key: string };
  selfSigned: { cert: string; key: string };
  client: { cert: string; key: string; passphrase: string };
  /** A client certificate signed by a CA the server does not trust. */
  stranger: { cert: string; key: string };
  remove(): void;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `openssl ${args[0]} failed (apt-get install -y openssl): ${stderr ?? (error as Error).message}`,
    );
  }
}

/** A certificate request for `subject`, signed by the CA in `dir`, with `extensions` (an ext file's lines). */
function signed(
  dir: string,
  name: string,
  subject: string,
  extensions: string,
  keyArgs: string[] = ['-nodes'],
): void {
  openssl(['req', ...EC, ...keyArgs, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  const ca = ['-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2'];
  openssl(
    ['x509', '-req', '-in', `${name}.csr`, ...ca, '-extfile', `${name}.ext`, '-out', `${name}.pem`],
    dir,
  );
}

/** A self-signed certificate `name`.pem and its key in `dir`: a CA's, or a server's with `extra` arguments. */
function selfSigned(dir: string, name: string, subject: string, extra: string[] = []): void {
  const args = ['-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', subject];
  openssl(['req', '-x509', ...EC, ...args, ...extra], dir);
}

export function makeCertificates(passphrase = 'correct horse'): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-tls-'));
  const at = (name: string) => join(dir, name);
  selfSigned(dir, 'ca', '/CN=petstore-load test CA');
  const names = 'subjectAltName=IP:127.0.0.1,DNS:localhost';
  signed(dir, 'server', '/CN=localhost', `${names}\nextendedKeyUsage=serverAuth\n`);
  selfSigned(dir, 'self', '/CN=localhost', ['-addext', names]);
  const encrypted = ['-passout', `pass:${passphrase}`];
  signed(dir, 'client', '/CN=petstore-load client', 'extendedKeyUsage=clientAuth\n', encrypted);
  // A client certificate from another CA: the server must refuse it.
  const other = join(dir, 'other');
  mkdirSync(other);
  selfSigned(other, 'ca', '/CN=another CA');
  signed(other, 'client', '/CN=stranger', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    ca: at('ca.pem'),
    server: { cert: at('server.pem'), key: at('server.key') },
    selfSigned: { cert: at('self.pem'), key: at('self.key') },
    client: { cert: at('client.pem'), key: at('client.key'), passphrase },
    stranger: { cert: join(other, 'client.pem'), key: join(other, 'client.key') },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsFrontOptions {
  upstream: string;
  cert: { cert: string; key: string };
  /** Offer HTTP/2 (ALPN h2) beside HTTP/1.1. */
  http2?: boolean;
  /** `ssl_verify_client on` with this CA: a client certificate it signed is required. */
  clientCa?: string;
  /** Also listen for plain HTTP on a port of its own (`plainUrl`): the same hop without TLS. */
  plain?: boolean;
}

export interface TlsFront {
  /** `https://127.0.0.1:PORT`. */
  url: string;
  /** `http://127.0.0.1:PORT`, with `plain`. */
  plainUrl: string | undefined;
  /** The protocol of every request nginx answered, in order ('HTTP/2.0', 'HTTP/1.1'), from its access log. */
  protocols(): string[];
  stop(): Promise<void>;
}

/** Debian's nginx terminating TLS in front of `upstream` (the reference server), on loopback. */
export async function startTlsFront(options: TlsFrontOptions): Promise<TlsFront> {
  const target = proxyTarget(options.upstream);
  let log = '';
  const plainPort = options.plain ? await freePort() : undefined;
  const nginx = await startNginx((port, at) => {
    log = at('access.log').slice(1, -1);
    return `log_format protocol '$server_protocol';
  server {
    listen 127.0.0.1:${port} ssl${options.http2 ? ' http2' : ''};${plainPort ? `\n    listen 127.0.0.1:${plainPort};` : ''}
    access_log ${at('access.log')} protocol;
    ssl_certificate ${JSON.stringify(options.cert.cert)};
    ssl_certificate_key ${JSON.stringify(options.cert.key)};
    ${options.clientCa ? `ssl_client_certificate ${JSON.stringify(options.clientCa)};\n    ssl_verify_client on;` : ''}
    location / {
      proxy_pass ${target};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`;
  });
  return {
    url: `https://127.0.0.1:${nginx.port}`,
    plainUrl: plainPort ? `http://127.0.0.1:${plainPort}` : undefined,
    protocols: () => {
      try {
        return readFileSync(log, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    stop: nginx.stop,
  };
}
