import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Servers under test listen on loopback with real sockets and time-scaled windows:
    // a generous timeout absorbs a loaded 2-core CI machine without hiding hangs.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
