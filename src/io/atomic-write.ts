import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Every file the toolkit writes goes through here: the text to a temporary file in the same
 * directory, then a rename over the path. A process killed mid-write (the OOM killer, a CI cancel)
 * or a disk that fills leaves the previous file or none, never half of one. This is against the
 * process dying, not the machine: nothing is fsynced.
 */
export function writeFileAtomic(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temporary, text);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * A new file, never over one: the text to a temporary file, then a hard link at the path, which
 * fails if the path exists (whoever made it, whenever). False when the file was there already.
 */
export function createFileAtomic(path: string, text: string): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temporary, text);
    try {
      linkSync(temporary, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A file system without hard links: an exclusive create instead (not atomic, still never over one).
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
      writeFileSync(path, text, { flag: 'wx' });
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * An append as one atomic write: what the file holds, the text added, the whole renamed over it
 * ($GITHUB_STEP_SUMMARY, which other steps append to as well).
 */
export function appendFileAtomic(path: string, text: string): void {
  let before = '';
  try {
    before = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  writeFileAtomic(path, before + text);
}

/** The file system's refusals, as a person reads them; the code stays for a search. */
const REFUSALS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EROFS: 'the file system is read-only',
  ENOENT: 'a directory on the path does not exist',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'the path is a directory',
  ENAMETOOLONG: 'the path is too long',
  EMFILE: 'too many files are open',
  EIO: 'the device failed to read or write',
};

/** Why a write failed, in words: `no space left on the device (ENOSPC)`. */
export function writeRefusal(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === undefined) return 'it could not be written';
  return `${REFUSALS[code] ?? 'the system refused it'} (${code})`;
}
