/**
 * The catalogue the scenarios and `bench` prepare: in src/, since the toolkit (bench) needs it too and
 * data flows one way, from scenarios into src. Scenario authors import it from here or from
 * scenarios/lib/catalogue.ts.
 */
import type { ApiResponse } from '../api/call-types.ts';
import type { Api } from '../client/petstore-api.ts';
import { tlsFailureWords } from '../transport/tls-failure.ts';

export interface Catalogue {
  categoryIds: number[];
  petIds: number[];
}

/** A setup call that got no HTTP answer at all: the target is unreachable as the run reaches it (exit 3). */
export class NoAnswerError extends Error {}

/**
 * How a setup call failed, as the error its one line says: the status it answered, or, with none,
 * why (a TLS failure in words, with the flag that addresses it).
 */
export function failedCall(operation: string, reply: ApiResponse): Error {
  if (reply.status !== 0) return new Error(`${operation} answered ${reply.status}`);
  const code = reply.error ?? 'unknown';
  const words = tlsFailureWords(code);
  return new NoAnswerError(`${operation} got no answer (${words ? `${words}; ${code}` : code})`);
}

/** Stock given to the pets setup prepares, so that shoppers do not run them out during a run. */
export const SETUP_STOCK = 1_000_000;

/**
 * What most flows need: a few categories and pets with deep stock. It reuses what the target has and
 * creates the rest, so it works on the seeded reference server and on an empty one alike.
 */
export async function prepareCatalogue(api: Api, pets = 5): Promise<Catalogue> {
  const categories = await api.listCategories({ limit: 20 });
  let categoryIds = categories.ok ? categories.body.map((c) => c.id) : [];
  if (categoryIds.length === 0) {
    const created = await api.createCategory({ name: 'Dogs', description: 'Created by petstore-load setup' });
    if (!created.ok) throw failedCall('createCategory', created);
    categoryIds = [created.body.id];
  }
  const petIds: number[] = [];
  for (let i = 0; i < pets; i++) {
    const pet = await api.createPet({
      name: `load-test pet ${i + 1}`,
      categoryId: categoryIds[i % categoryIds.length] as number,
    });
    if (!pet.ok) throw failedCall('createPet', pet);
    const stocked = await api.updateInventory(pet.body.id, { quantity: SETUP_STOCK });
    if (!stocked.ok) throw failedCall('updateInventory', stocked);
    petIds.push(pet.body.id);
  }
  return { categoryIds, petIds };
}

/** Removes the pets setup created; best effort, the run's figures are already in. */
export async function removeCatalogue(api: Api, data: Catalogue | undefined): Promise<void> {
  for (const id of data?.petIds ?? []) await api.deletePet(id);
}
