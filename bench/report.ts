import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../src/io/atomic-write.ts';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Writes a benchmark's figures under reports/, with what is needed to compare machines. */
export function writeBenchReport(name: string, figures: object): string {
  const dir = fileURLToPath(new URL('../reports/', import.meta.url));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = `${dir}${name}-${stamp}.json`;
  const machine = {
    node: process.version,
    cores: cpus().length,
    cpu: cpus()[0]?.model,
    platform: process.platform,
  };
  writeFileAtomic(
    path,
    `${JSON.stringify({ name, at: new Date().toISOString(), machine, ...figures }, null, 2)}\n`,
  );
  return path;
}
