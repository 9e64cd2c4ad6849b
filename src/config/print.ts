import { Secret } from './secret.ts';

/**
 * A resolved configuration as `--print-config` shows it: JSON, Maps as objects, URLs as text, and
 * every key as where it came from (Secret's toJSON). Functions and undefined fields are left out.
 */
export function configJson(config: unknown): string {
  return `${JSON.stringify(config, replacer, 2)}\n`;
}

function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Secret) return value.toJSON();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (value instanceof URL) return value.href;
  if (typeof value === 'function') return undefined;
  if (typeof value === 'bigint') return value.toString();
  return value;
}
