import { setFlagsFromString } from 'node:v8';

let done = false;

/**
 * Turns off V8's allocation-site pretenuring for this process, once, before a run allocates.
 *
 * Why: with thousands of keys, a key's state is made on its first request and kept until its next,
 * seconds later. At 10,000 keys V8 tenured three allocation sites of the request path
 * (--trace-pretenuring), and from then on each request's own objects (its headers, its record,
 * undici's parse of the response) survived scavenges (a sampling heap profile) and filled the old
 * generation, about 10 MB/s until a mark-compact: bench:tenants saw the heap climb from 47 to
 * 145 MB between collections, and peak RSS 244 MB against 183 MB with pretenuring off. A load
 * generator's request objects die young by nature; long-lived key state is copied once when it
 * is promoted.
 *
 * A V8 flag is process-wide and set at run time here (V8 reads this one when it decides, at each
 * scavenge), so worker threads and the bench children that run the pipeline get it as `run` does.
 */
export function keepRequestObjectsYoung(): void {
  if (done) return;
  done = true;
  setFlagsFromString('--no-allocation-site-pretenuring');
}
