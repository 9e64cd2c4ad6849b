import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import type { NetworkOptions } from '../transport/network.ts';
import { targetProblem } from '../transport/preflight.ts';

/**
 * Refuses a target that cannot be reached (exit 3), in the words of what failed: a connection
 * refused, a proxy that is not there, a certificate the run would not accept and the flag for it.
 */
export async function checkReachable(
  url: URL,
  network: NetworkOptions | undefined,
  target: string,
): Promise<void> {
  const problem = await targetProblem(url, network);
  if (problem) throw new InputError(`target ${target} ${problem}`, EXIT.UNREACHABLE);
}

/** Whether the target takes a connection (and its TLS handshake) as the run would make it. */
export async function reachable(url: URL, network: NetworkOptions | undefined): Promise<boolean> {
  return (await targetProblem(url, network)) === undefined;
}
