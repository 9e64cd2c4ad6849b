import { describe, expect, it } from 'vitest';
import { bypasses, proxyFromEnv } from '../../src/transport/proxy-env.ts';

const https = new URL('https://api.example.com:8443/v1');
const http = new URL('http://127.0.0.1:8080');

describe('proxyFromEnv: the proxy environment as curl and Go read it', () => {
  it('an https target takes https_proxy before HTTPS_PROXY, and never falls back to HTTP_PROXY', () => {
    expect(proxyFromEnv(https, { https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:2' })).toEqual({
      url: 'http://a:1',
      from: 'https_proxy',
    });
    expect(proxyFromEnv(https, { HTTPS_PROXY: 'http://b:2' })?.from).toBe('HTTPS_PROXY');
    expect(proxyFromEnv(https, { HTTP_PROXY: 'http://c:3', http_proxy: 'http://c:3' })).toBeUndefined();
  });

  it('an http target takes http_proxy before HTTP_PROXY, not HTTPS_PROXY', () => {
    expect(proxyFromEnv(http, { HTTP_PROXY: 'http://c:3' })?.from).toBe('HTTP_PROXY');
    expect(proxyFromEnv(http, { http_proxy: 'http://d:4', HTTP_PROXY: 'http://c:3' })?.url).toBe(
      'http://d:4',
    );
    expect(proxyFromEnv(http, { HTTPS_PROXY: 'http://b:2' })).toBeUndefined();
  });

  it('no_proxy (before NO_PROXY) covering the target: no proxy', () => {
    expect(proxyFromEnv(http, { HTTP_PROXY: 'http://c:3', NO_PROXY: '127.0.0.1' })).toBeUndefined();
    expect(
      proxyFromEnv(http, { HTTP_PROXY: 'http://c:3', no_proxy: 'other', NO_PROXY: '127.0.0.1' })?.from,
    ).toBe('HTTP_PROXY');
  });
});

describe('bypasses: what a NO_PROXY list covers', () => {
  it.each([
    ['*', https, true],
    ['example.com', https, true],
    ['.example.com', https, true],
    ['*.example.com', https, true],
    ['xample.com', https, false],
    ['api.example.com:8443', https, true],
    ['api.example.com:443', https, false],
    ['other.org, example.com', https, true],
    ['127.0.0.1', http, true],
    ['127.0.0.2', http, false],
    ['127.0.0.0/8', http, true],
    ['10.0.0.0/8', http, false],
    ['127.0.0.1:8080', http, true],
    ['127.0.0.1:80', http, false],
    ['localhost', http, false],
    ['::1', new URL('http://[::1]:9/'), true],
    ['[::1]:9', new URL('http://[::1]:9/'), true],
    ['::/0', new URL('http://[::1]:9/'), true],
    ['', http, false],
  ])('%j covers %s: %s', (list, target, covered) => {
    expect(bypasses(target, list)).toBe(covered);
  });
});
