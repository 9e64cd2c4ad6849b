import { parseStoreAddress, type StoreAddress } from '../api/redis.ts';

/** A Redis URL for --quota-store (a Sentinel one too), and how results name it: no user, no password. */
export function parseQuotaStoreUrl(text: string): StoreAddress {
  return parseStoreAddress(text, '--quota-store');
}
