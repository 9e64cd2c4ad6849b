import { resolve } from 'node:path';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { parseStoreAddress } from '../api/redis.ts';
import { fleetResultOf, partsOf } from '../fleet/fleet-result.ts';
import { FleetStore } from '../fleet/fleet-store.ts';
import { resultFromJson } from '../report/result-input.ts';
import { writeResultAndReport } from './write-output.ts';

/** `--fleet STORE/NAME`: the store's address, and the fleet's name as its last path segment. */
export function parseFleetAddress(text: string): { store: { url: string; label: string }; name: string } {
  const cut = text.lastIndexOf('/');
  const name = text.slice(cut + 1);
  if (cut < 0 || !/^[\w.-]+$/.test(name) || text.slice(0, cut).endsWith('/'))
    throw new InputError(
      `merge --fleet: expected the store and the fleet's name, e.g. redis://HOST:6379/nightly-42, got '${text}'`,
    );
  return { store: parseStoreAddress(text.slice(0, cut), 'merge --fleet'), name };
}

/**
 * `merge --fleet`: the fleet's result as its generators left it in the store, written to DIR as
 * result.json and report.html: the result the generator that merged first wrote, or, if none did
 * (it could not write, or the fleet ended without one), the shards merged here alike. A fleet whose
 * generators still run is not merged: its result is not there yet.
 */
export async function mergeFleet(address: string, out: string): Promise<number> {
  const { store: where, name } = parseFleetAddress(address);
  let store: FleetStore | undefined;
  try {
    store = await FleetStore.open(where.url, name);
  } catch (error) {
    throw new InputError(
      `merge --fleet: store ${where.label}: cannot connect (${(error as Error).message})`,
      EXIT.UNREACHABLE,
    );
  }
  if (!store)
    throw new InputError(
      `merge --fleet: no fleet ${name} in ${where.label} (never run there, or expired after its --fleet-ttl)`,
    );
  try {
    const stored = await store.fleetResult();
    let result = stored && resultFromJson(JSON.parse(stored), `fleet ${name}'s result`);
    if (!result) {
      const held = await store.shards(true);
      const running = held.filter((h) => h.alive && !h.stored).map((h) => h.index);
      if (running.length > 0)
        throw new InputError(
          `merge --fleet: fleet ${name} is still running (generator ${running.join(', ')}); merge it once it has ended`,
          EXIT.UNREACHABLE,
        );
      result = fleetResultOf(name, held.length, partsOf(held, name));
    }
    const dir = resolve(out);
    const written = writeResultAndReport(dir, result, `fleet-${name}`);
    for (const line of written.written) console.log(line);
    if (result.meta.partial) console.log(`partial: ${result.meta.interruptedBy ?? 'interrupted'}`);
    return written.failed ? EXIT.WRITE_FAILED : EXIT.OK;
  } finally {
    await store.close();
  }
}
