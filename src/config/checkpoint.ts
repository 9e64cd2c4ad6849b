import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';

/** The checkpoint's name in the output directory, beside result.json. */
export const CHECKPOINT_FILE = 'result.partial.json';

/** `--checkpoint`: a duration with its unit, or `0`/`off` for none. Milliseconds, 0 for none. */
export function parseCheckpointInterval(text: string): number {
  if (text === 'off' || text === '0') return 0;
  const ms = parseDuration(text, '--checkpoint');
  // Each checkpoint builds and writes the whole result: more often than a second is a cost, not safety.
  if (ms < 1000) throw new InputError(`--checkpoint: '${text}' is under 1s (or 'off' for none)`);
  return ms;
}
