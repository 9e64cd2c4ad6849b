import {
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * `mkdir -p`, one directory at a time: Node's own recursive mkdir loops for ever, at full CPU and
 * deaf to signals, where mkdir answers ENOENT under a directory that exists (procfs: `/proc/x`).
 * Here that answer is an error in words. The directories made are added to `made`, outermost first
 * (those made before a failure too).
 */
export function makeDirectories(dir: string, made: string[] = [], again = true): string[] {
  const missing: string[] = [];
  for (let at = resolve(dir); !exists(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const at of missing) {
    try {
      mkdirSync(at);
      made.push(at);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Made meanwhile by another process: as good as made here.
      if (code === 'EEXIST' && statSync(at).isDirectory()) continue;
      if (code === 'ENOENT' && exists(dirname(at))) Object.assign(error as Error, { refusal: NO_DIRECTORY });
      // A parent removed meanwhile (another process's trial of the same folder): once more from the top.
      else if (code === 'ENOENT' && again) return makeDirectories(dir, made, false);
      throw error;
    }
  }
  return made;
}

const NO_DIRECTORY = 'the file system makes no directory there';

/** Whether anything (a directory, a file) is at the path; a path through a file has nothing. */
function exists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

const PROBE_BYTES = Buffer.alloc(64 * 1024);

/**
 * Whether files can be written in `dir`, tried before a run sends anything: the directory made, a
 * file written and removed in it, then the directories made for the trial removed, so that the
 * trial leaves the disk as it found it. Throws the system's error; `writeRefusal` says it in words.
 */
export function tryWritableDirectory(dir: string): void {
  const made: string[] = [];
  const probe = join(dir, `.petstore-load-probe.${process.pid}.tmp`);
  try {
    makeDirectories(dir, made);
    // Some bytes, not none: a full disk still makes an empty file (an inode), and refuses these.
    try {
      writeFileSync(probe, PROBE_BYTES);
    } catch (error) {
      // Another run's trial of the same new directory may have removed it meanwhile: made again, once.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      makeDirectories(dir, made);
      writeFileSync(probe, PROBE_BYTES);
    }
  } finally {
    // A write refused half-way (a full disk) still made the file: it goes whatever happened.
    try {
      rmSync(probe, { force: true });
    } catch {}
    // Innermost first, and only while empty: a directory someone else has written in meanwhile stays.
    for (const at of made.reverse()) {
      try {
        rmdirSync(at);
      } catch {}
    }
  }
}

/**
 * Every file the toolkit writes goes through here: the text to a temporary file in the same
 * directory, then a rename over the path. A process killed mid-write (the OOM killer, a CI cancel)
 * or a disk that fills leaves the previous file or none, never half of one. This is against the
 * process dying, not the machine: nothing is fsynced.
 */
export function writeFileAtomic(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    makeDirectories(dirname(path));
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
    makeDirectories(dirname(path));
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
  const refusal = (error as { refusal?: unknown }).refusal;
  if (typeof refusal === 'string') return `${refusal} (${code})`;
  return `${REFUSALS[code] ?? 'the system refused it'} (${code})`;
}
