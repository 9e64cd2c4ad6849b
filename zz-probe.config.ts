import { mergeConfig } from 'vitest/config';
import base from '/work/main/vitest.unit.config.ts';
export default mergeConfig(base, { test: { setupFiles: ['/tmp/vt/setup.ts'], globals: true } });
