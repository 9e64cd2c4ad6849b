#!/usr/bin/env node
// Runs the TypeScript sources through tsx: scenarios are TypeScript too, so there is no build step
// to forget and a user's scenario is loaded exactly like our own code.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
