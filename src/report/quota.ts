import { bindingRate } from '../api/plan-admits.ts';
import type { RunResult } from '../result/types.ts';

/**
 * What the plan's windows, all at once, admit a second over the run: the rate utilisation is of,
 * named beside it by the summary and the report (a tenant mix's is every key's plan rate).
 */
export function admittedRate(result: RunResult): number {
  const seconds = result.meta.durationSeconds;
  const mix = result.byPlan !== undefined || result.byTenantGroup !== undefined;
  return mix || seconds <= 0
    ? result.compliance.planRate
    : bindingRate(result.config.windows, seconds * 1000);
}
