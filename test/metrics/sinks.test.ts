import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { metricsFlags } from '../../src/config/metrics-flags.ts';
import { parseMetricsFlags } from '../../src/metrics/sinks.ts';

/** `--metrics` and `--metrics-interval`: one-line input errors that never repeat a credential. */
describe('--metrics flags', () => {
  it('takes prometheus=URL, repeatable; userinfo becomes basic auth, never the shown host', () => {
    const [plain, secret] = parseMetricsFlags([
      'prometheus=http://127.0.0.1:9090/api/v1/write',
      'prometheus=https://me:s%40cret@prom.example.test/api/v1/push?tenant=a#x',
    ]);
    expect(plain).toMatchObject({ kind: 'prometheus', host: '127.0.0.1:9090' });
    expect(plain?.endpoint.authorization).toBeUndefined();
    expect(secret?.host).toBe('prom.example.test');
    expect(secret?.endpoint.url.href).toBe('https://prom.example.test/api/v1/push?tenant=a');
    expect(secret?.endpoint.authorization).toBe(`Basic ${Buffer.from('me:s@cret').toString('base64')}`);
  });

  it.each([
    ['influx=http://127.0.0.1:8086', /unknown sink 'influx'/],
    ['http://127.0.0.1:9090', /expected KIND=URL|unknown sink/],
    ['prometheus=not a url s3cret', /--metrics prometheus: not a URL/],
    ['prometheus=ftp://me:s3cret@127.0.0.1/', /must be http:\/\/ or https:\/\//],
    // No `prometheus=`: the text before the first `=` is a URL with a password, not a sink's name.
    ['https://me:s3cret@prom.example.test/api/v1/write?tenant=a', /expected KIND=URL/],
  ])('refuses %s in one line without repeating it', (flag, message) => {
    let error: unknown;
    try {
      parseMetricsFlags([flag]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('s3cret');
    expect((error as Error).message).not.toContain('\n');
  });

  it('refuses one endpoint twice: it would get every sample twice', () => {
    const url = 'prometheus=http://127.0.0.1:9090/api/v1/write';
    expect(() => parseMetricsFlags([url, url])).toThrow(/the same endpoint is given twice/);
  });

  it('checks the interval, refuses it alone, and refuses --workers', () => {
    const sink = ['prometheus=http://127.0.0.1:9090/api/v1/write'];
    expect(metricsFlags({ metrics: sink, workers: 1 })?.intervalMs).toBe(5000);
    expect(metricsFlags({ metrics: sink, metricsInterval: '250ms', workers: 1 })?.intervalMs).toBe(250);
    expect(metricsFlags({ workers: 4 })).toBeUndefined();
    expect(() => metricsFlags({ metrics: sink, metricsInterval: '5', workers: 1 })).toThrow(/not a duration/);
    expect(() => metricsFlags({ metrics: sink, metricsInterval: '10ms', workers: 1 })).toThrow(
      /at least 100ms/,
    );
    expect(() => metricsFlags({ metricsInterval: '5s', workers: 1 })).toThrow(/needs --metrics/);
    expect(() => metricsFlags({ metrics: sink, workers: 2 })).toThrow(/--workers/);
  });
});
