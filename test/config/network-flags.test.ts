import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NetworkArgs, networkFlags } from '../../src/config/network-flags.ts';
import { makeCertificates, type TestCertificates } from '../helpers/tls-target.ts';

let certs: TestCertificates;
beforeAll(() => {
  certs = makeCertificates('s3cret phrase');
});
afterAll(() => certs.remove());

const https = new URL('https://127.0.0.1:8443/api');
/** Against the https target unless a third argument says otherwise (undefined: the embedded server). */
const resolve = (args: NetworkArgs, env: NodeJS.ProcessEnv = {}, ...target: [URL | undefined] | []) =>
  networkFlags(args, target.length ? target[0] : https, env);

describe('networkFlags: --ca, --insecure, --cert, --key, --http2, --proxy, resolved before anything starts', () => {
  it('no flag and no proxy variable: Node defaults, nothing recorded, the proxy shown as none', () => {
    const n = resolve({});
    expect(n.options).toBeUndefined();
    expect(n.seen).toBeUndefined();
    expect(n.printable).toEqual({ proxy: 'none' });
    expect(n.warnings).toEqual([]);
  });

  it('--ca: its certificates trusted; the file named and counted, never its contents', () => {
    const n = resolve({ ca: certs.ca, http2: true });
    expect(n.options?.ca).toBe(readFileSync(certs.ca, 'utf8'));
    expect(n.options?.http2).toBe(true);
    expect(n.seen).toEqual({ ca: true, http2: true });
    expect(n.printable).toEqual({
      ca: `${certs.ca} (1 certificate)`,
      http2: 'offered (ALPN h2)',
      proxy: 'none',
    });
  });

  it('--cert and --key with the passphrase from the environment: opened and matched; neither key nor passphrase printed', () => {
    const n = resolve(
      { cert: certs.client.cert, key: certs.client.key, keyPassphraseEnv: 'PW' },
      { PW: 's3cret phrase' },
    );
    expect(n.options?.passphrase).toBe('s3cret phrase');
    expect(n.options?.key).toContain('ENCRYPTED PRIVATE KEY');
    expect(n.seen).toEqual({ clientCertificate: true });
    const printed = JSON.stringify(n.printable);
    expect(printed).toContain('CN=petstore-load client');
    expect(printed).toContain('passphrase from $PW');
    expect(printed).not.toMatch(/s3cret|PRIVATE KEY|BEGIN/);
  });

  it.each<[string, () => NetworkArgs, NodeJS.ProcessEnv, RegExp]>([
    ['--ca with --insecure', () => ({ ca: certs.ca, insecure: true }), {}, /^--ca and --insecure contradict/],
    ['--ca of no file', () => ({ ca: '/nonexistent.pem' }), {}, /^--ca \/nonexistent\.pem: no such file$/],
    ['--ca of a key, not a certificate', () => ({ ca: certs.server.key }), {}, /holds no PEM certificate/],
    ['--cert without --key', () => ({ cert: certs.client.cert }), {}, /^--cert needs --key/],
    ['--key without --cert', () => ({ key: 'pro=an-api-key' }), {}, /^--key needs --cert: .*--api-key/],
    [
      'an encrypted key with no passphrase',
      () => ({ cert: certs.client.cert, key: certs.client.key }),
      {},
      /the key is encrypted; name the variable that holds its passphrase with --key-passphrase-env NAME/,
    ],
    [
      'a wrong passphrase',
      () => ({ cert: certs.client.cert, key: certs.client.key, keyPassphraseEnv: 'PW' }),
      { PW: 'not-the-phrase' },
      /cannot be opened with the passphrase given/,
    ],
    [
      'a passphrase variable that is not set',
      () => ({ cert: certs.client.cert, key: certs.client.key, keyPassphraseEnv: 'NOPE' }),
      {},
      /^--key-passphrase-env NOPE: the environment has no NOPE$/,
    ],
    [
      "another certificate's key",
      () => ({ cert: certs.server.cert, key: certs.selfSigned.key }),
      {},
      /the key is not this certificate's/,
    ],
    ['--key-passphrase-env alone', () => ({ keyPassphraseEnv: 'PW' }), { PW: 'x' }, /needs --cert and --key/],
    [
      '--proxy of another scheme',
      () => ({ proxy: 'socks5://127.0.0.1:1080' }),
      {},
      /^--proxy: a socks5 proxy is not supported/,
    ],
    [
      'HTTPS_PROXY that is no URL',
      () => ({}),
      { HTTPS_PROXY: 'http://[bad' },
      /^HTTPS_PROXY: not a proxy URL/,
    ],
  ])('%s: refused in one line that echoes no secret', (_, args, env, message) => {
    let error: Error | undefined;
    try {
      resolve(args(), env);
    } catch (e) {
      error = e as Error;
    }
    expect(error?.name).toBe('InputError');
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toMatch(/an-api-key|not-the-phrase|\n/);
  });

  it('the proxy: from the environment for this target unless NO_PROXY covers it, --proxy over it, none with --proxy none', () => {
    const env = { HTTPS_PROXY: 'http://user:pw@127.0.0.1:3128' };
    const fromEnv = resolve({}, env);
    expect(fromEnv.options?.proxy).toBe('http://user:pw@127.0.0.1:3128/');
    expect(fromEnv.printable.proxy).toBe('http://127.0.0.1:3128 (from HTTPS_PROXY)');
    expect(fromEnv.seen).toEqual({ proxy: 'http://127.0.0.1:3128' });
    expect(JSON.stringify([fromEnv.printable, fromEnv.seen])).not.toContain('pw');
    expect(resolve({}, { ...env, NO_PROXY: '127.0.0.1' }).options).toBeUndefined();
    expect(resolve({ proxy: '127.0.0.1:9999' }, env).options?.proxy).toBe('http://127.0.0.1:9999/');
    expect(resolve({ proxy: 'none' }, env).options).toBeUndefined();
    // The embedded server is on loopback: the environment's proxy is not for it.
    expect(resolve({}, env, undefined).options).toBeUndefined();
  });

  it('TLS flags against a plain-HTTP target are taken and said to change nothing', () => {
    expect(resolve({ ca: certs.ca }, {}, new URL('http://127.0.0.1:1')).warnings).toEqual([
      '--ca: the target is plain HTTP, so it changes nothing',
    ]);
    expect(resolve({ insecure: true, http2: true }, {}, undefined).warnings).toEqual([
      '--insecure, --http2: the target is plain HTTP, so they change nothing (HTTP/2 is offered through TLS only)',
    ]);
  });

  it('--ca with several certificates counts them; one that does not parse is named by its place', () => {
    const two = join(certs.dir, 'two.pem');
    writeFileSync(two, readFileSync(certs.ca, 'utf8') + readFileSync(certs.server.cert, 'utf8'));
    expect(resolve({ ca: two }).printable.ca).toBe(`${two} (2 certificates)`);
    const broken = join(certs.dir, 'broken.pem');
    writeFileSync(
      broken,
      `${readFileSync(certs.ca, 'utf8')}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
    );
    expect(() => resolve({ ca: broken })).toThrow(/certificate 2 of 2 cannot be parsed/);
  });
});
