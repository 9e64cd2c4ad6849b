// Preloaded (NODE_OPTIONS=--import) by bench:startup into every process it times: at exit, the
// process's peak resident set (getrusage's maxrss, threads included), in MB, to $BENCH_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS / 1024)));
