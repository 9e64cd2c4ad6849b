import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPlanOverrides, DEFAULT_PLANS, type PlanTable } from '../api/plans.ts';
import { writeFileAtomic } from '../io/atomic-write.ts';

/** Enterprise with limits no benchmark reaches: the embedded server then measures cost, not 429s. */
export const UNLIMITED_OVERRIDES = { enterprise: { perMinute: 1_000_000_000, perDay: 1_000_000_000 } };

/** A plans file for the embedded server's `--plans`, its table, and a function that removes it. */
export function unlimitedPlansFile(): { path: string; plans: PlanTable; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-load-bench-'));
  const path = join(dir, 'plans.json');
  writeFileAtomic(path, JSON.stringify(UNLIMITED_OVERRIDES));
  return {
    path,
    plans: applyPlanOverrides(DEFAULT_PLANS, UNLIMITED_OVERRIDES),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
