import { readFileSync } from 'node:fs';
import { InputError } from '../api/input-error.ts';
import { parseTenantsFile } from '../api/tenants.ts';
import { largestWithKeys } from '../capacity/tenants/tenant-ramp.ts';
import { Secret } from './secret.ts';

/** A file the flags name, read whole; a file that cannot be read is one line naming the flag. */
export function readTextFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(
      `${what} ${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

/** `capacity --tenants --tenants-file`'s keys, by plan, in the file's order, and the largest ramp they allow. */
export interface TenantFileKeys {
  readonly file: string;
  readonly byPlan: Readonly<Record<string, readonly Secret[]>>;
  /** The most tenants of the mix the keys allow, at most --max-tenants. */
  readonly max: number;
}

/**
 * Reads and checks the tenant ramp's keys before anything starts, so that `--print-config` finds a
 * bad file as the run would: every plan of the mix has a key, and the keys allow at least
 * --tenants-start tenants. Each key is held as where it came from (the file and its tenant number).
 */
export function tenantFileKeys(
  file: string,
  mix: Readonly<Record<string, number>>,
  maxTenants: number,
  start: number,
): TenantFileKeys {
  const what = `--tenants-file ${file}`;
  const byPlan: Record<string, Secret[]> = {};
  parseTenantsFile(readTextFile(file, '--tenants-file'), what).forEach((k, i) => {
    const keys = byPlan[k.plan] ?? [];
    keys.push(new Secret(k.key, `${what}, tenant ${i + 1}${k.name ? ` (${k.name})` : ''}`));
    byPlan[k.plan] = keys;
  });
  for (const plan of Object.keys(mix))
    if (!byPlan[plan]) throw new InputError(`${what}: no key of plan '${plan}'`);
  const counts = Object.fromEntries(Object.entries(byPlan).map(([p, keys]) => [p, keys.length]));
  const max = largestWithKeys(mix, counts, maxTenants);
  if (max < start)
    throw new InputError(
      `${what}: its keys allow at most ${max} tenants of the mix, fewer than --tenants-start ${start}`,
    );
  return { file, byPlan, max };
}
