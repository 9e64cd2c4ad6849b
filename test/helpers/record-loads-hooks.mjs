// The hooks thread's half of record-loads.mjs (Node 20, which has no in-thread hooks).
import { appendFileSync } from 'node:fs';

let out;
export function initialize(data) {
  out = data;
}
export async function load(url, context, next) {
  appendFileSync(out, `${url}\n`);
  return next(url, context);
}
