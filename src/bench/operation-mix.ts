import { InputError } from '../api/input-error.ts';

/** One operation of the benchmark and its share of the requests: `weight` slots of every cycle. */
export interface MixEntry {
  operationId: string;
  weight: number;
}

/**
 * Read-mostly, as the browse-heavy scenarios are (listing and viewing pets dominate what a shop's
 * clients send), with the one write a shop lives on, an order, so that the write path costs show too.
 */
export const DEFAULT_OPERATIONS = 'listPets:4,getPetById:3,listCategories:1,getInventoryItem:1,placeOrder:1';

/** A weight is slots in the request cycle every connection walks through: keep the cycle short. */
const MAX_WEIGHT = 100;

/**
 * `getPetById,listPets:3`: operation ids of the table, each with an optional whole weight (default 1).
 * Anything else is an InputError naming what is wrong, before any traffic.
 */
export function parseOperationMix(text: string, known: readonly string[]): MixEntry[] {
  const entries: MixEntry[] = [];
  for (const item of text.split(',')) {
    const trimmed = item.trim();
    if (trimmed === '') throw new InputError(`--operations: empty item in '${text}'`);
    const [id = '', weightText, ...rest] = trimmed.split(':');
    const weight = weightText === undefined ? 1 : Number(weightText);
    if (rest.length > 0 || !Number.isInteger(weight) || weight < 1 || weight > MAX_WEIGHT)
      throw new InputError(
        `--operations: '${trimmed}' is not OPERATION or OPERATION:WEIGHT (a whole weight from 1 to ${MAX_WEIGHT})`,
      );
    if (!known.includes(id))
      throw new InputError(`--operations: unknown operation '${id}' (known: ${known.join(', ')})`);
    if (entries.some((e) => e.operationId === id))
      throw new InputError(`--operations: '${id}' is named twice; give it one weight`);
    entries.push({ operationId: id, weight });
  }
  return entries;
}
