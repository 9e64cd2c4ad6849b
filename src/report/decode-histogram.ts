import { InputError } from '../api/input-error.ts';
import { decodeHistogram, type Histogram } from '../record/histogram.ts';

/**
 * The schema only says a histogram is base64; a damaged or foreign one fails here, as an input
 * error naming where it is, not as a stack trace from deep inside the decoder.
 */
export function decodeOrRefuse(encoded: string, where: string): Histogram {
  try {
    return decodeHistogram(encoded);
  } catch (error) {
    throw new InputError(`${where}: not an HdrHistogram (${(error as Error).message.split('\n')[0]})`);
  }
}
