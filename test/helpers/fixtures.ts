import { fileURLToPath } from 'node:url';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../src/api/plans.ts';

/** Limits no test can reach, so that a 429 never stands in for the behaviour under test. */
export const UNREACHABLE_LIMITS = { perMinute: 1_000_000, perDay: 100_000_000 };
export const UNLIMITED_PLANS = applyPlanOverrides(DEFAULT_PLANS, {
  free: UNREACHABLE_LIMITS,
  pro: UNREACHABLE_LIMITS,
  business: UNREACHABLE_LIMITS,
  enterprise: UNREACHABLE_LIMITS,
});

/** A body each body-taking operation accepts, with ids that exist on a seeded server (pet 1, category 1). */
export const VALID_BODIES: Readonly<Record<string, unknown>> = {
  createPet: { name: 'Fido', categoryId: 1 },
  updatePet: { name: 'Fido', categoryId: 1 },
  createCategory: { name: 'Rodents' },
  placeOrder: { petId: 1, quantity: 1 },
  updateInventory: { quantity: 50 },
};

/**
 * A document of our own declaring IETF draft 7's RateLimit on its 200s, 400s and 429s (Retry-After
 * too on its 429s) and no header on its 201 and 204, as public documents do (the Train Travel API).
 */
export const CONTRACT_IETF = fileURLToPath(
  new URL('../fixtures/openapi/contract-ietf.yaml', import.meta.url),
);
