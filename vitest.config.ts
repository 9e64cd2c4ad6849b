import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Servers under test listen on loopback with real sockets and time-scaled windows:
    // a generous timeout absorbs a loaded 2-core CI machine without hiding hangs.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two test files at a time: by default vitest keeps one core for itself, which on the 2-core CI
    // machine runs the files one by one (8.5 min); most of a test's time is its servers and child
    // processes waiting on time-scaled windows, which do not mind sharing a core.
    maxWorkers: 2,
  },
});
