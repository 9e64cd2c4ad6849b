import { describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, type PlanTable } from '../../src/api/plans.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { call, type Reply, sleep } from '../helpers/http.ts';
import { inSimulatedTime, type SimulatedServer, serversClosedAfterEach } from '../helpers/simulated.ts';

/**
 * `serve --block DURATION`: a key refused once is refused until the block ends, whatever its window
 * says, with Retry-After telling the block; a request inside it does not prolong it. 3 a minute at
 * time scale 30 is a window of 2 s; a block of 150 s is 5 s. In simulated time (test/helpers/simulated.ts).
 */

const plans: PlanTable = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 3, perDay: 1000 } });
const server = serversClosedAfterEach({ seedData: 3, timeScale: 30, plans }, 1);

const pets = (s: SimulatedServer) => call(s.url, '/pets?limit=1');
const retryAfter = (r: Reply) => Number(r.headers['retry-after']);

async function burst(s: SimulatedServer, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await pets(s)).status);
  return statuses;
}

describe('a block after the first excess', () => {
  it('refuses the key past its window until the block ends, Retry-After telling it; a knock inside it changes nothing', () =>
    inSimulatedTime(async () => {
      const s = await server({ blockMs: 150_000 });
      const start = Date.now();
      expect(await burst(s, 3)).toEqual([200, 200, 200]);
      const excess = await pets(s);
      expect(excess.status).toBe(429);
      expect(retryAfter(excess)).toBe(5);
      // The window has ended; the block has not, and says how much of it is left.
      await sleep(2500);
      const inside = await pets(s);
      expect(inside.status).toBe(429);
      expect(retryAfter(inside)).toBeGreaterThanOrEqual(2);
      expect(retryAfter(inside)).toBeLessThanOrEqual(3);
      // Five seconds from the excess, not from the knock.
      await sleep(start + 5100 - Date.now());
      expect((await pets(s)).status).toBe(200);
    }));

  it('without it, the same burst is back with its window', () =>
    inSimulatedTime(async () => {
      const s = await server({});
      expect(await burst(s, 4)).toEqual([200, 200, 200, 429]);
      await sleep(2100);
      expect((await pets(s)).status).toBe(200);
    }));

  it('a --block that is not a positive duration is refused: one line, exit 2', async () => {
    const refused = await cliInProcess(['serve', '--port', '0', '--block', '0s']);
    expect(refused.stderr.trim()).toBe('petstore-load: --block must be a positive number');
    expect(refused.code).toBe(2);
    const soon = await cliInProcess(['serve', '--port', '0', '--block', 'soon']);
    expect(soon.stderr.trim()).toMatch(/^petstore-load: --block: 'soon' is not a duration/);
    expect(soon.code).toBe(2);
  });
});
