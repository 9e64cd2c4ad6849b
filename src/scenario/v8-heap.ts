import { setFlagsFromString } from 'node:v8';

let done = false;

/**
 * Turns off V8's allocation-site pretenuring for this process, once, before a run allocates.
 *
 * Why: with thousands of keys, a key's state is made on its first request and kept until its next,
 * seconds later, so V8 sees the allocation sites on the request path survive and starts allocating
 * there straight in old space. Each request's own objects (its headers, its record, undici's parse
 * of the response) are then kept alive through scavenges by old objects that are already garbage,
 * and the old generation grows by about 10 MB/s until a mark-compact: bench:tenants at 10,000 keys
 * saw the heap climb from 47 to 145 MB between collections, peak RSS 244 MB against 183 MB with
 * pretenuring off, and the CPU of the extra collections. A load generator's request objects die
 * young by nature, so leaving them in the young generation costs nothing; long-lived key state
 * is copied once when it is promoted.
 *
 * A V8 flag is process-wide and set at run time here (V8 reads this one when it decides, at each
 * scavenge), so worker threads and the bench children that run the pipeline get it as `run` does.
 */
export function keepRequestObjectsYoung(): void {
  if (done) return;
  done = true;
  setFlagsFromString('--no-allocation-site-pretenuring');
}
