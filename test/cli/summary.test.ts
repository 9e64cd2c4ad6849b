import { describe, expect, it } from 'vitest';
import { failureLine, formatSummary } from '../../src/cli/summary.ts';
import { ladder, mixedRefusals, syntheticResult } from '../helpers/synthetic-result.ts';
import { withTenants } from '../report/tenants-fixture.ts';

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

  it('calls the wait pacing when the quota was paced, and the ban guard it was in raw mode', async () => {
    const result = await syntheticResult([{ op: 'listPets', ms: 5, status: 429 }]);
    result.compliance.pacingWaitMs = 244_000;
    result.compliance.backoffWaitMs = 1_500;
    result.config.enforce = true;
    const enforced = formatSummary(result, 'result.json');
    expect(enforced).toContain('waited 244 s pacing, 1.5 s backoff');
    result.config.enforce = false;
    const raw = formatSummary(result, 'result.json');
    expect(raw).not.toMatch(/pacing,/);
    // Raw mode paces no quota: what it waited was its ban guard, and the spacing the 429 taught.
    expect(raw).toContain(
      'waited 244 s for the ban guard and what refusals taught, 1.5 s backoff (raw mode paces no quota)',
    );
    // Nothing learned: enforced, the line says so; raw, there is no limiter line to read as pacing.
    result.compliance.limiter = { model: 'unknown', given: false, gapMs: 1, rateCuts: 0 };
    result.config.enforce = true;
    expect(formatSummary(result, 'result.json')).toContain('limiter: not known; 1 ms kept between sends');
    result.config.enforce = false;
    expect(formatSummary(result, 'result.json')).not.toContain('limiter:');
    result.compliance.limiter = { model: 'gcra', given: false, gapMs: 1025, rateCuts: 0 };
    expect(formatSummary(result, 'result.json')).toContain('limiter: gcra (learned from');
    delete result.compliance.limiter;
    // Paced, the 429 is a finding; raw, it is how the client learns the limit.
    expect(enforced).toContain(
      "FAIL  429s: 1 of 1 to a paced client, which the plan's pace should draw none of",
    );
    expect(raw).toContain('ok    429s: 1 of 1, expected in raw mode');
    // Only that phrase and the verdict differ: the rest of the summary reads the same in both modes.
    const without = (text: string) =>
      text.replace(/; waited .*$/m, '').replace(/^verdict: [\s\S]*?(?=^result written)/m, '');
    expect(without(raw)).toBe(without(enforced));
  });
});

describe("the terminal summary of the server's holds, in its own words", () => {
  const IETF = 'RateLimit remaining=0, reset=10';
  /** The line of the quota after its `waited`, where the waits are named. */
  const waited = (text: string) => (/; (waited .*)$/m.exec(text) as RegExpExecArray)[1];

  async function heldByItsBudget(enforce: boolean, heldMs: number) {
    const result = await syntheticResult([{ op: 'listPets', ms: 5 }]);
    result.config.enforce = enforce;
    result.meta.durationSeconds = 10;
    Object.assign(result.compliance, {
      pacingWaitMs: 10_000,
      budgetWaitMs: 9_000,
      backoffWaitMs: 0,
      budgetHold: { ms: heldMs, fields: IETF },
    });
    return result;
  }

  it("names the told budget's fields apart from the plan's pacing, and says when it held most of the run", async () => {
    const text = formatSummary(await heldByItsBudget(true, 9_000), 'result.json');
    expect(waited(text)).toBe(
      `waited 1 s pacing, 9 s held by the server's told budget (${IETF}), 0 s backoff`,
    );
    const most = text.split('\n').filter((l) => l.startsWith("the target's own fields held"));
    expect(most).toEqual([
      `the target's own fields held the key 9.0 s of the run's 10.0 s (90%): ${IETF}, its told budget spent until its reset; --enforce off if it is a mock that always says 0, else a key of a bigger plan or a longer --duration`,
    ]);
    expect([waited(text), ...most].join('\n')).not.toContain('X-RateLimit');
    // Half of the run or less is a hold among others: no line of its own.
    expect(formatSummary(await heldByItsBudget(true, 5_000), 'result.json')).not.toContain(
      "the target's own fields held",
    );
  });

  it('raw mode: the told budget, then the ban guard, and no refusal where none came', async () => {
    const result = await heldByItsBudget(false, 9_000);
    const text = formatSummary(result, 'result.json');
    expect(waited(text)).toBe(
      `waited 9 s held by the server's told budget (${IETF}), 1 s for the ban guard, 0 s backoff (raw mode paces no quota)`,
    );
    expect(waited(text)).not.toMatch(/429|refus/);
    // Raw mode meant to meet the limit: being held is what it measures, not a line of advice.
    expect(text).not.toContain("the target's own fields held");
  });

  it('a hold past the run names its cause and the fields that told it', async () => {
    const result = await syntheticResult([{ op: 'listPets', ms: 5 }]);
    const fields = 'X-RateLimit-Remaining: 0, X-RateLimit-Reset: 2777777777';
    result.compliance.heldPastEnd = { until: Date.UTC(2058, 0, 3, 4, 5, 6), by: fields, cause: 'budget' };
    expect(formatSummary(result, 'result.json')).toContain(
      `held by the server's told budget until 2058-01-03 04:05:06 UTC (${fields}): the run ended first`,
    );
    result.compliance.heldPastEnd = {
      until: Date.UTC(2058, 0, 3, 4, 5, 6),
      by: 'backoff after 3 refusals',
      cause: 'pause',
    };
    expect(formatSummary(result, 'result.json')).toContain(
      'paused after refusals until 2058-01-03 04:05:06 UTC (backoff after 3 refusals)',
    );
  });
});

describe("the terminal summary of the limiter's refusals", () => {
  it('names the statuses when a refusal was not a 429, and says what a bare 503 or a turned 403 may be', async () => {
    const lines = formatSummary(await mixedRefusals(), 'result.json').split('\n');
    const quota = lines.findIndex((l) => l.startsWith('quota: '));
    expect(lines[quota]).toContain('; refusals 15 (429: 12, 503: 3); retries 0;');
    expect(lines[quota + 1]).toBe(
      "503 unexplained: 2 — no Retry-After, no rate-limit field, no problem type: a headerless limiter (nginx limit_req answers 503 by default) or an overloaded target; kept away from as refusals; --refusal-status 503 counts them as the limiter's",
    );
    expect(lines[quota + 2]).toBe(
      "403 after admissions: 1 — a key the limiter admitted turned to bare 403s, as a limiter refusing with 403 does; --refusal-status 403 counts them as the limiter's refusals",
    );
    // The table's column counts every refusal: it is not headed 429s when some were 503s.
    const header = lines.find((l) => l.startsWith('operation')) as string;
    expect(header).toMatch(/ refused +errors /);
    expect(header).not.toContain('429s');
    expect((lines.find((l) => l.startsWith('all ')) as string).trim().split(/\s+/)[6]).toBe('15');
  });

  it("keeps today's wording when every refusal was a 429, as for an older result without refusals", async () => {
    const result = await syntheticResult([...ladder('listPets', 5), ...ladder('listPets', 2, 429)]);
    expect(result.compliance.refusals).toEqual({ 429: 2 });
    const text = formatSummary(result, 'result.json');
    expect(text).toContain('; 429s 2; retries 0;');
    expect(text).toMatch(/^operation .* 429s +errors /m);
    expect(text).not.toMatch(/refusals|unexplained|after admissions|refused/);
    delete result.compliance.refusals;
    expect(formatSummary(result, 'result.json')).toBe(text);
  });
});

describe('the terminal summary of a tenant mix', () => {
  it('shows each tier and named group side by side, then the isolation verdict per tier', async () => {
    const result = withTenants(await syntheticResult(ladder('listPets', 20)), { broken: true });
    const lines = formatSummary(result, 'result.json').split('\n');
    const header = lines.find((l) => l.startsWith('tier ')) as string;
    expect(header.trim().split(/\s+/)).toEqual([
      'tier',
      'keys',
      'requests',
      'rate/s',
      'p50',
      'resp',
      'p99',
      'resp',
      '429s',
      'violations',
      'errors',
      'util',
      'keys',
      'min/p50/max',
    ]);
    const cells = (start: string) => (lines.find((l) => l.startsWith(start)) as string).trim().split(/\s+/);
    expect(cells('free ')).toEqual([
      'free',
      '198/200',
      '12000',
      '1200',
      expect.any(String),
      expect.any(String),
      '0',
      '0',
      '0',
      '98.0%',
      '91.0%/98.5%/100.0%',
    ]);
    expect(cells('pro ')[6]).toBe('37');
    expect(cells('abusive (group, raw)').slice(3, 5)).toEqual(['5/5', '900']);
    // The tiers come after the operations, before the quota.
    const at = (start: string) => lines.findIndex((l) => l.startsWith(start));
    expect(at('all ')).toBeLessThan(at('tier '));
    expect(at('isolation: ')).toBeLessThan(at('quota: '));
    expect(lines[at('isolation: ')]).toBe(
      'isolation: FAIL (abusive from 5 s): pro: 37 429s after abusive started (0 before)',
    );
    expect(lines[at('isolation: ') + 1]).toMatch(
      /^ {2}ok {4}free {2}requests 6000 -> 6000, p50 1\.\d+ -> 1\.\d+ ms, p99 .* ms, 429s 0 -> 0, errors 0 -> 0, p 0\.\d{3}$/,
    );
    expect(lines[at('isolation: ') + 2]).toMatch(
      /^ {2}FAIL {2}pro {3}requests 1500 -> 1500, .* 429s 0 -> 37, .*: 37 429s after abusive started \(0 before\)$/,
    );
    expect(failureLine(result)).toBe('isolation broken: pro: 37 429s after abusive started (0 before)');
  });

  it('shows no tier and no verdict for a run without tenants', async () => {
    const text = formatSummary(await syntheticResult(ladder('listPets', 20)), 'result.json');
    expect(text).not.toMatch(/^tier |isolation/m);
  });
});
