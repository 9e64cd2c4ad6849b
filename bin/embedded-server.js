#!/usr/bin/env node
// The embedded reference server's own process (src/cli/embedded-server.ts starts it): the server
// alone, its options resolved by the parent and sent over the IPC channel; none of the command
// line's parser and tables. Not a command for people: `petstore-load serve` is.
import module from 'node:module';
import { ourModule } from './source-stamp.js';

module.enableCompileCache?.();

await import(await ourModule('server/child'));
