import { createHmac } from 'node:crypto';
import { InputError } from './input-error.ts';
import type { PlanTable, RateWindow } from './plans.ts';
import type { TenantGroupSpec, TenantRef } from './tenant-types.ts';

/** A tenant and its key: the key stays in the client's memory, never in a record. */
export interface TenantKey {
  readonly tenant: TenantRef;
  readonly key: string;
}

/** A resolved group: its spec and its tenants, in order. */
export interface TenantGroup {
  readonly spec: TenantGroupSpec;
  readonly name: string;
  readonly tenants: readonly TenantKey[];
}

/** A tenant mix ready to run. */
export interface TenantMix {
  readonly groups: readonly TenantGroup[];
  /** Every tenant, by `index`. */
  readonly tenants: readonly TenantKey[];
}

/** A key that came from a file or the environment, with what it is for. */
export interface NamedKey {
  plan: string;
  key: string;
  name?: string;
}

const NAME = /^[A-Za-z0-9_-]{1,40}$/;
/** Bounded: one process is built for 10,000 keys; the bound keeps a typo (1e7) from eating memory. */
export const MAX_TENANT_KEYS = 100_000;

/** Checks a declared mix, one line per mistake, before any key is minted or any request sent. */
export function validateTenantSpecs(specs: unknown, plans: PlanTable, what = 'tenants'): TenantGroupSpec[] {
  if (!Array.isArray(specs) || specs.length === 0)
    throw new InputError(`${what}: a non-empty list of groups is required ({ plan, keys })`);
  let total = 0;
  const names = new Set<string>();
  return specs.map((raw, i) => {
    const at = `${what}[${i}]`;
    if (typeof raw !== 'object' || raw === null) throw new InputError(`${at}: a group must be an object`);
    const s = raw as Record<string, unknown>;
    for (const field of Object.keys(s))
      if (!['plan', 'keys', 'rate', 'enforce', 'name', 'startTime'].includes(field))
        throw new InputError(`${at}: unknown field '${field}' (plan, keys, rate, enforce, name, startTime)`);
    if (typeof s.plan !== 'string' || !plans[s.plan])
      throw new InputError(
        `${at}: plan '${String(s.plan)}' is not in the plan table (${Object.keys(plans).join(', ')})`,
      );
    if (typeof s.keys !== 'number' || !Number.isInteger(s.keys) || s.keys < 1)
      throw new InputError(`${at}: keys must be a whole number >= 1`);
    total += s.keys;
    if (total > MAX_TENANT_KEYS)
      throw new InputError(`${what}: more than ${MAX_TENANT_KEYS.toLocaleString('en')} keys in all`);
    if (s.enforce !== undefined && typeof s.enforce !== 'boolean')
      throw new InputError(`${at}: enforce must be true or false`);
    if (s.name !== undefined) {
      if (typeof s.name !== 'string' || !NAME.test(s.name))
        throw new InputError(`${at}: name must be 1 to 40 letters, digits, '_' or '-'`);
      if (plans[s.name]) throw new InputError(`${at}: name '${s.name}' is a plan's name; choose another`);
      if (names.has(s.name)) throw new InputError(`${at}: name '${s.name}' is used twice`);
      names.add(s.name);
    }
    if (s.rate !== undefined && typeof s.rate !== 'number' && typeof s.rate !== 'string')
      throw new InputError(`${at}: rate must be a number per second or a share like '100%'`);
    if (s.startTime !== undefined && typeof s.startTime !== 'number' && typeof s.startTime !== 'string')
      throw new InputError(`${at}: startTime must be a duration like '10s'`);
    return s as unknown as TenantGroupSpec;
  });
}

/**
 * Keys the reference server mints for a mix: derived from a seed, so that the generator and the
 * server (another process) agree on them without any key being passed on a command line or written
 * to a file. The seed is random per run (the server gets it through its environment).
 */
export function mintedKey(seed: string, plan: string, ordinal: number): string {
  const digest = createHmac('sha256', seed).update(`${plan}\u0000${ordinal}`).digest('base64url');
  return `${plan}-tenant-${digest.slice(0, 22)}`;
}

/** The environment variable through which the CLI gives the embedded server its minting seed. */
export const TENANT_SEED_ENV = 'PETSTORE_LOAD_TENANT_SEED';

/** How many keys of each plan a mix needs minted (named groups draw their own keys too). */
export function keysPerPlan(specs: readonly TenantGroupSpec[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of specs) counts[s.plan] = (counts[s.plan] ?? 0) + s.keys;
  return counts;
}

/** Every key a mix needs minted, key -> plan, for the server's key table. */
export function mintedKeyTable(
  seed: string,
  counts: Readonly<Record<string, number>>,
): Record<string, string> {
  const table: Record<string, string> = {};
  for (const [plan, n] of Object.entries(counts))
    for (let i = 1; i <= n; i++) table[mintedKey(seed, plan, i)] = plan;
  return table;
}

/**
 * Builds the mix's tenants. Keys come from `keyFor(plan, n)` (the n-th key of that plan across the
 * mix, 1-based): minted ones, or a file's in its order.
 */
export function buildTenantMix(
  specs: readonly TenantGroupSpec[],
  windowsOf: (plan: string) => readonly RateWindow[],
  keyFor: (plan: string, n: number, group: TenantGroupSpec) => string,
): TenantMix {
  const usedOfPlan: Record<string, number> = {};
  const tenants: TenantKey[] = [];
  const groups = specs.map((spec, groupIndex) => {
    const name = spec.name ?? spec.plan;
    const windows = windowsOf(spec.plan);
    const members: TenantKey[] = [];
    // Unnamed groups of one plan form one tier: their ordinals continue rather than restart.
    const ordinalBase = spec.name
      ? 0
      : tenants.filter((t) => !t.tenant.named && t.tenant.plan === spec.plan).length;
    for (let i = 1; i <= spec.keys; i++) {
      const n = (usedOfPlan[spec.plan] ?? 0) + 1;
      usedOfPlan[spec.plan] = n;
      const ordinal = ordinalBase + i;
      const tenant: TenantRef = Object.freeze({
        index: tenants.length,
        plan: spec.plan,
        group: name,
        named: spec.name !== undefined,
        ordinal,
        label: `${name}#${ordinal}`,
        windows,
        enforce: spec.enforce ?? true,
        groupIndex,
      });
      const member = { tenant, key: keyFor(spec.plan, n, spec) };
      members.push(member);
      tenants.push(member);
    }
    return { spec, name, tenants: members };
  });
  return { groups, tenants };
}

/**
 * Reads a `--tenants` file: JSON (a list of { plan, key, name? }) or CSV with a header line naming
 * the columns plan, key and optionally name. A key written `env:NAME` is read from that environment
 * variable, so that files can be committed without secrets. No message ever quotes a key.
 */
export function parseTenantsFile(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): NamedKey[] {
  const trimmed = text.trim();
  const rows =
    trimmed.startsWith('[') || trimmed.startsWith('{') ? jsonRows(trimmed, file) : csvRows(trimmed, file);
  if (rows.length === 0) throw new InputError(`${file}: no tenants in the file`);
  const seen = new Set<string>();
  return rows.map((row, i) => {
    const at = `${file}: tenant ${i + 1}`;
    if (!row.plan) throw new InputError(`${at}: plan is missing`);
    if (!row.key) throw new InputError(`${at}: key is missing`);
    if (row.name !== undefined && row.name !== '' && !NAME.test(row.name))
      throw new InputError(`${at}: name must be 1 to 40 letters, digits, '_' or '-'`);
    let key = row.key;
    const ref = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(key);
    if (ref) {
      const value = env[ref[1] as string];
      if (!value) throw new InputError(`${at}: environment variable ${ref[1]} is not set`);
      key = value;
    }
    if (!/^[\x21-\x7e]+$/.test(key))
      throw new InputError(`${at}: the key is not printable ASCII without spaces (not shown)`);
    if (seen.has(key)) throw new InputError(`${at}: the same key as an earlier tenant (not shown)`);
    seen.add(key);
    return { plan: row.plan, key, ...(row.name ? { name: row.name } : {}) };
  });
}

type Row = { plan?: string; key?: string; name?: string };

function jsonRows(text: string, file: string): Row[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text around the fault, which may be a key.
    throw new InputError(`${file}: not valid JSON`);
  }
  const list = Array.isArray(data) ? data : (data as { tenants?: unknown }).tenants;
  if (!Array.isArray(list)) throw new InputError(`${file}: expected a list of { plan, key, name? }`);
  return list.map((item, i) => {
    if (typeof item !== 'object' || item === null)
      throw new InputError(`${file}: tenant ${i + 1} is not an object`);
    const o = item as Record<string, unknown>;
    for (const field of ['plan', 'key', 'name'])
      if (o[field] !== undefined && typeof o[field] !== 'string')
        throw new InputError(`${file}: tenant ${i + 1}: ${field} must be a string`);
    return { plan: o.plan as string, key: o.key as string, name: o.name as string | undefined };
  });
}

function csvRows(text: string, file: string): Row[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  const header = (lines.shift() ?? '').split(',').map((h) => h.trim().toLowerCase());
  if (!header.includes('plan') || !header.includes('key'))
    throw new InputError(`${file}: the first line must name the columns, e.g. plan,key,name`);
  return lines.map((line, i) => {
    const cells = line.split(',').map((c) => c.trim());
    if (cells.length > header.length)
      throw new InputError(`${file}: line ${i + 2} has more cells than the header names`);
    const row: Row = {};
    header.forEach((h, j) => {
      if (h === 'plan' || h === 'key' || h === 'name') row[h] = cells[j];
    });
    return row;
  });
}

/**
 * Groups a file's keys as a mix: one group per (plan, name) in the file's order of first
 * appearance. A group the scenario declares with the same plan and name lends its rate, enforce
 * and startTime; the file decides the keys and how many.
 */
export function specsFromKeys(
  keys: readonly NamedKey[],
  plans: PlanTable,
  declared: readonly TenantGroupSpec[] = [],
  file = '--tenants',
): { specs: TenantGroupSpec[]; keyFor: (plan: string, n: number, group: TenantGroupSpec) => string } {
  const groups = new Map<string, { spec: TenantGroupSpec; keys: string[] }>();
  for (const [i, k] of keys.entries()) {
    // The value is not quoted: columns in another order than the header says put a key there.
    if (!plans[k.plan])
      throw new InputError(
        `${file}: tenant ${i + 1}: its plan is not in the plan table (${Object.keys(plans).join(', ')})`,
      );
    const id = `${k.plan}\u0000${k.name ?? ''}`;
    let group = groups.get(id);
    if (!group) {
      const like = declared.find((d) => d.plan === k.plan && d.name === k.name);
      const spec: TenantGroupSpec = { ...(like ?? {}), plan: k.plan, keys: 0 };
      if (k.name) spec.name = k.name;
      else delete spec.name;
      group = { spec, keys: [] };
      groups.set(id, group);
    }
    group.spec.keys++;
    group.keys.push(k.key);
  }
  const list = [...groups.values()];
  const specs = validateTenantSpecs(
    list.map((g) => g.spec),
    plans,
    file,
  );
  // keyFor's n counts keys of a plan across groups in mix order: map it back to the group's own list.
  const byPlan: Record<string, string[]> = {};
  for (const g of list) byPlan[g.spec.plan] = [...(byPlan[g.spec.plan] ?? []), ...g.keys];
  return { specs, keyFor: (plan, n) => byPlan[plan]?.[n - 1] as string };
}

export type { TenantGroupSpec, TenantRef };
