/**
 * The documented demo keys of the reference server, one per plan. They live on the ground floor
 * because the load side needs them too: with no --base-url, `run` starts the embedded server and
 * uses the demo key of the plan it paces for.
 */
export const DEMO_KEYS: Readonly<Record<string, string>> = Object.freeze({
  'free-demo-key': 'free',
  'pro-demo-key': 'pro',
  'business-demo-key': 'business',
  'enterprise-demo-key': 'enterprise',
});

export function demoKeyFor(plan: string): string | undefined {
  return Object.entries(DEMO_KEYS).find(([, p]) => p === plan)?.[0];
}
