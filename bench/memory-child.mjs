// bench:memory's child, as the CLI would run it: build/bench/memory-child.js while build/ is fresh,
// else the sources (through tsx where Node does not strip types).
import { ourModule } from '../bin/source-stamp.js';

await import(await ourModule('bench/memory-child'));
