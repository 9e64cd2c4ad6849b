import type { ServerProcess } from '../src/cli/embedded-server.ts';
import { forkTied } from '../src/cli/tied-child.ts';

// The real `run` pipeline for one flow, in src/ so that a benchmark's child can run it from build/.
export { runFlow, runFlowObserved } from '../src/bench/run-flow.ts';
// Throughput benchmarks measure cost, not 429s: the same never-limiting enterprise plan as `bench`.
export { unlimitedPlansFile } from '../src/bench/unlimited-plans.ts';

/**
 * Stops these servers when the benchmark is interrupted (SIGINT, SIGTERM) as well as when it ends:
 * call the returned function in a finally. A spawned server must never outlive its benchmark.
 */
export function stopOnExit(servers: ServerProcess[]): () => Promise<void> {
  const onSignal = (signal: NodeJS.Signals) => {
    for (const s of servers) s.child.kill('SIGTERM');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return async () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    // A server stopped already (or dead) has nothing to wait for: stop() would wait for an exit that came.
    await Promise.all(
      servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null).map((s) => s.stop()),
    );
  };
}

/**
 * Runs `script` (a benchmark file, with this process's loader flags: tsx) as a child process of its
 * own, so that its peak RSS is its own, and resolves with the one report it sends over IPC. The
 * child is killed if this process exits first, and exits by itself if this one is killed (forkTied:
 * the script calls exitWithParent first thing).
 */
export function forkReport<T>(
  script: string,
  args: string[],
  what: string,
  options: { execArgv?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = forkTied(script, args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: options.execArgv ?? process.execArgv,
      ...(options.env ? { env: options.env } : {}),
    });
    let report: T | undefined;
    proc.on('message', (m) => {
      report = m as T;
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      if (report !== undefined && code === 0) resolve(report);
      else reject(new Error(`the child ${what} exited with ${code ?? signal}`));
    });
    // The parent interrupted: the child goes too.
    const kill = () => proc.kill('SIGTERM');
    process.once('exit', kill);
    proc.once('exit', () => process.removeListener('exit', kill));
  });
}
