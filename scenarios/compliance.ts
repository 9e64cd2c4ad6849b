import { randomBytes } from 'node:crypto';
import {
  type Api,
  defineScenario,
  describeResponse,
  expectError,
  formatHttpDate,
  isErrorBody,
  type Probe,
  type ProbeOutcome,
  parseDeprecation,
  parseLinks,
  parseRetryAfter,
  parseSunset,
  probeBattery,
  RATE_LIMIT_HEADER,
  readRateLimitHeaders,
} from 'petstore-load';

interface Target {
  petId: number;
  categoryId: number;
  /** A pet setup had to create (an empty target): teardown removes it. */
  createdPetId?: number;
}

/** An id no record has (ids are assigned upwards from 1). */
const UNKNOWN_ID = 999_999_999;

/** A made-up key, different each run; it is sent, never printed or recorded. */
const unknownKey = () => `compliance-probe-${randomBytes(12).toString('hex')}`;

/** A pet that a non-conforming service created after all is removed again, and the probe fails. */
async function removeIfCreated(api: Api, response: { ok: boolean; body: unknown }): Promise<void> {
  const id = (response.body as { id?: unknown } | undefined)?.id;
  if (response.ok && typeof id === 'number') await api.deletePet(id);
}

const authMissing: Probe<Target> = {
  id: 'auth-missing-key',
  description: 'GET /pets without an Authorization header',
  expected: '401 Error',
  source: 'seed: Authentication 3, Errors',
  run: async (api) => expectError(await api.call('listPets', { query: { limit: 1 }, auth: 'none' }), 401),
};

const authUnknown: Probe<Target> = {
  id: 'auth-unknown-key',
  description: 'GET /pets with a Bearer key the service never issued',
  expected: '401 Error',
  source: 'seed: Authentication 3, Errors',
  run: async (api) =>
    expectError(await api.call('listPets', { query: { limit: 1 }, auth: { key: unknownKey() } }), 401),
};

const invalidJson: Probe<Target> = {
  id: 'invalid-json',
  description: 'POST /pets with a body that is not JSON (cut short)',
  expected: '400 Error',
  source: 'seed: Errors (400)',
  run: async (api, data) => {
    const response = await api.call('createPet', {
      rawBody: `{"name": "compliance probe", "categoryId": ${data.categoryId}`,
    });
    await removeIfCreated(api, response);
    return expectError(response, 400);
  },
};

const missingField: Probe<Target> = {
  id: 'missing-required-field',
  description: 'POST /pets without the required field name',
  expected: '400 Error',
  source: 'seed: Errors (400), NewPet',
  run: async (api, data) => {
    const response = await api.call('createPet', { body: { categoryId: data.categoryId } });
    await removeIfCreated(api, response);
    return expectError(response, 400);
  },
};

const wrongContentType: Probe<Target> = {
  id: 'wrong-content-type',
  description: 'POST /pets with a valid JSON body sent as text/plain',
  expected: '400 Error',
  source: 'seed: Authentication 2, Errors (400)',
  run: async (api, data) => {
    const response = await api.call('createPet', {
      rawBody: JSON.stringify({ name: 'compliance probe', categoryId: data.categoryId }),
      contentType: 'text/plain',
    });
    await removeIfCreated(api, response);
    return expectError(response, 400);
  },
};

const unknownId: Probe<Target> = {
  id: 'unknown-id',
  description: `GET /categories/${UNKNOWN_ID}, an id no record has`,
  expected: '404 Error',
  source: 'document: getCategory',
  run: async (api) => expectError(await api.getCategory(UNKNOWN_ID), 404),
};

const deprecated: Probe<Target> = {
  id: 'deprecated-headers',
  description: 'GET /pets/{petId} (deprecated): Deprecation, Sunset and Link rel="sunset"',
  expected: 'Deprecation @<unix>, Sunset <IMF-fixdate> not before it, Link rel="sunset"',
  source: 'seed: Versioning; RFC 9745, RFC 8594',
  run: async (api, data): Promise<ProbeOutcome> => {
    const response = await api.getPetById(data.petId);
    const h = response.headers;
    const deprecation = parseDeprecation(h.deprecation);
    const sunset = parseSunset(h.sunset);
    const sunsetLink = parseLinks(h.link).some((l) => l.rel.includes('sunset'));
    const problems: string[] = [];
    // 200 before the sunset, 410 Gone (with an Error body) after it.
    if (!(response.status === 200 || (response.status === 410 && isErrorBody(response))))
      problems.push(`status ${describeResponse(response)}, expected 200 (or 410 Error after the sunset)`);
    if (!deprecation)
      problems.push(
        `Deprecation ${h.deprecation === undefined ? 'missing' : `'${h.deprecation}' is not @<unix seconds>`}`,
      );
    if (!sunset)
      problems.push(`Sunset ${h.sunset === undefined ? 'missing' : `'${h.sunset}' is not an HTTP date`}`);
    if (deprecation && sunset && sunset < deprecation) problems.push('Sunset is before Deprecation');
    if (!sunsetLink)
      problems.push(`no Link with rel="sunset"${h.link === undefined ? '' : ` in '${h.link}'`}`);
    const actual = [
      String(response.status),
      deprecation ? `Deprecation @${Math.floor(deprecation.getTime() / 1000)}` : 'no valid Deprecation',
      sunset ? `Sunset ${formatHttpDate(sunset)}` : 'no valid Sunset',
      sunsetLink ? 'Link rel="sunset"' : 'no sunset Link',
    ].join(', ');
    return problems.length === 0
      ? { passed: true, actual }
      : { passed: false, actual, detail: problems.join('; ') };
  },
};

const overQuota: Probe<Target> = {
  id: 'over-quota-429',
  description:
    'GET /pets without pacing until the window is spent: one request beyond it, then nothing before Retry-After',
  expected: '429 Error with Retry-After and X-RateLimit-Limit, -Remaining 0, -Reset',
  source: 'seed: Limits, Errors (429)',
  run: async (api): Promise<ProbeOutcome> => {
    // Sequential and unretried: the first 429 ends the probe, and the client's pause keeps every
    // later request of the key behind its Retry-After (the seed's ban punishes hurrying).
    let response = await api.call('listPets', { query: { limit: 1 }, retry: false });
    const budget = (readRateLimitHeaders(response.headers).remaining ?? 1000) + 3;
    let sent = 1;
    while (response.status !== 429 && sent < budget) {
      response = await api.call('listPets', { query: { limit: 1 }, retry: false });
      sent++;
    }
    if (response.status !== 429) {
      return {
        passed: false,
        actual: `no 429 after ${sent} requests (last: ${describeResponse(response)})`,
        detail:
          'the window should have been spent; with pacing on (--enforce on) the client never exceeds it',
      };
    }
    const h = response.headers;
    const rl = readRateLimitHeaders(h);
    const retryAfter = parseRetryAfter(h[RATE_LIMIT_HEADER.retryAfter]);
    const problems: string[] = [];
    if (!isErrorBody(response)) problems.push('the body is not an Error object with status 429');
    if (!retryAfter)
      problems.push(
        `Retry-After ${h['retry-after'] === undefined ? 'missing' : `'${h['retry-after']}' is neither delay-seconds nor an HTTP date`}`,
      );
    if (rl.limit === undefined) problems.push('X-RateLimit-Limit missing or not an integer');
    if (rl.remaining === undefined) problems.push('X-RateLimit-Remaining missing or not an integer');
    else if (rl.remaining !== 0) problems.push(`X-RateLimit-Remaining is ${rl.remaining} on a 429, not 0`);
    if (rl.reset === undefined) problems.push('X-RateLimit-Reset missing or not an integer');
    const actual = [
      `${describeResponse(response)} after ${sent} requests`,
      retryAfter
        ? `Retry-After ${retryAfter.form === 'seconds' ? retryAfter.seconds : formatHttpDate(retryAfter.date)}`
        : 'no valid Retry-After',
      `Limit ${rl.limit ?? '-'}, Remaining ${rl.remaining ?? '-'}, Reset ${rl.reset ?? '-'}`,
    ].join('; ');
    return problems.length === 0
      ? { passed: true, actual }
      : { passed: false, actual, detail: problems.join('; ') };
  },
};

/** Last: it spends the window and leaves the key paused until Retry-After. */
export const battery = probeBattery<Target>([
  authMissing,
  authUnknown,
  invalidJson,
  missingField,
  wrongContentType,
  unknownId,
  deprecated,
  overQuota,
]);

/**
 * The compliance battery: deterministic probes of the interface's promises (401, 400, 404, the
 * deprecated operation's headers, 429 with its headers), each passed or failed, like a conformance
 * suite. Raw mode, so that the last probe can exceed the quota; the ban guard stays on.
 */
export default defineScenario<Target>({
  name: 'compliance',
  description: 'Conformance probes: 401, 400, 404, deprecation headers, 429 with its headers',
  plan: 'free',
  enforce: false,
  workload: { executor: 'constant-vus', vus: 1, iterations: 1, duration: '2m' },
  setup: async (api) => {
    const pets = await api.listPets({ limit: 1 });
    const categories = await api.listCategories({ limit: 1 });
    let categoryId = categories.ok ? categories.body[0]?.id : undefined;
    if (categoryId === undefined) {
      const created = await api.createCategory({ name: 'compliance probes' });
      if (!created.ok) throw new Error(`createCategory answered ${created.status}`);
      categoryId = created.body.id;
    }
    const petId = pets.ok ? pets.body[0]?.id : undefined;
    if (petId !== undefined) return { petId, categoryId };
    const pet = await api.createPet({ name: 'compliance probe', categoryId });
    if (!pet.ok) throw new Error(`createPet answered ${pet.status}`);
    return { petId: pet.body.id, categoryId, createdPetId: pet.body.id };
  },
  probes: battery,
  flows: [battery.flow],
  teardown: async (api, data) => {
    if (data?.createdPetId !== undefined) await api.deletePet(data.createdPetId);
  },
});
