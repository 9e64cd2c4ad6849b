import { describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/cli/summary.ts';
import { syntheticResult } from '../helpers/synthetic-result.ts';

describe('the terminal summary', () => {
  it('has an errors column per operation (5xx and transport errors) and names the transport errors', async () => {
    const result = await syntheticResult([
      { op: 'listPets', ms: 5 },
      { op: 'listPets', ms: 5, status: 503 },
      { op: 'listPets', ms: 2000, errorCode: 'UND_ERR_HEADERS_TIMEOUT' },
      { op: 'getPetById', ms: 1, errorCode: 'ECONNRESET' },
      { op: 'getPetById', ms: 5, status: 404 },
    ]);
    const text = formatSummary(result, 'result.json');
    const lines = text.split('\n');
    const header = lines.find((l) => l.startsWith('operation')) as string;
    const cell = (name: string) =>
      (lines.find((l) => l.startsWith(`${name} `)) as string).trim().split(/\s+/);
    // The header's words before 'errors' include three 'ms' that no row has a cell for.
    const errorsAt = header.trim().split(/\s+/).indexOf('errors') - 3;
    expect(errorsAt).toBe(7);
    expect(cell('listPets')[errorsAt]).toBe('2');
    expect(cell('getPetById*')[errorsAt]).toBe('1');
    expect(cell('all')[errorsAt]).toBe('3');
    expect(text).toContain('transport errors: 1 timeout (UND_ERR_HEADERS_TIMEOUT 1), 1 reset (ECONNRESET 1)');
  });

  it('states a pause that outlived the run in a date, and names a failed setup as the partial reason', async () => {
    const result = await syntheticResult([{ op: 'listPets', ms: 5, status: 429 }]);
    result.compliance.heldPastEnd = { until: Date.UTC(2058, 0, 3, 4, 5, 6), by: 'Retry-After 999999999 s' };
    result.meta.partial = true;
    result.meta.interruptedBy = 'setup failed: listPets answered 429';
    const text = formatSummary(result, 'result.json');
    expect(text).toContain(
      'paused by the server until 2058-01-03 04:05:06 UTC (Retry-After 999999999 s): the run ended first',
    );
    expect(text).toContain('(PARTIAL: setup failed: listPets answered 429)');
    result.meta.interruptedBy = 'SIGTERM';
    expect(formatSummary(result, 'result.json')).toContain('(PARTIAL: interrupted by SIGTERM)');
  });
});
