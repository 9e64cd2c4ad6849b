import { readFileSync } from 'node:fs';
import { InputError } from '../api/input-error.ts';

export function readJsonFile(path: string, flag: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(
      `${flag} ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`${flag} ${path}: not valid JSON (${(error as Error).message.split('\n')[0]})`);
  }
}
