import { afterEach, describe, expect, it, vi } from 'vitest';
import { commands } from '../../src/cli/commands.ts';

const fail = (message: string): never => {
  throw new Error(message);
};

interface Usage {
  help(): string;
}
const usageOf = (parser: unknown): Usage =>
  (parser as { getInternalMethods(): { getUsageInstance(): Usage } }).getInternalMethods().getUsageInstance();

describe('the command line', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('starts a command without rendering its help (yargs would, before the first request)', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const parser = commands(['run', '--print-config'], fail);
    const help = vi.spyOn(usageOf(parser), 'help');
    await parser.parseAsync();
    expect(out).toHaveBeenCalled();
    expect(JSON.parse(String(out.mock.calls[0]?.[0]))).toHaveProperty('scenario');
    expect(help).not.toHaveBeenCalled();
  });

  it('still renders the help when asked for it', async () => {
    const parser = commands(['run'], fail);
    const text = await parser.getHelp();
    expect(text).toContain('--base-url');
  });
});
