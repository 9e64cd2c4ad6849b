/**
 * The name nearest to a misspelt one, for a "did you mean": within a third of its length in edits
 * (at least 2), case aside. Undefined when none is that near.
 */
export function nearest(typed: string, names: readonly string[]): string | undefined {
  const wanted = typed.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(wanted, name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(typed.length / 3)) ? best.name : undefined;
}

/** Levenshtein's distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(
        (row[j] as number) + 1,
        (next[j - 1] as number) + 1,
        (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[b.length] as number;
}
