import type { ApiResponse, CallInput } from '../api/call-types.ts';
import { now } from '../client/clock.ts';
import { AbortedError } from '../client/gate.ts';
import { type Api, PetstoreApi } from '../client/petstore-api.ts';
import type { ProbeResult } from '../result/probe-types.ts';
import type { Battery, Flow, Probe, Scenario } from './define.ts';

/**
 * A compliance battery: probes run once each, in order, by one flow (`battery.flow`, in a workload of
 * one iteration), their verdicts kept for the result. As a k6 script declares its custom metrics, a
 * scenario declares its battery at module level and names it in `probes`; the run reads `results()`
 * when the workload is over. A new iteration of the flow starts the verdicts afresh.
 */
export class ProbeBattery<D = unknown> implements Battery<D> {
  readonly flow: Flow<D>;
  private verdicts: ProbeResult[] = [];
  readonly probes: readonly Probe<D>[];

  constructor(probes: readonly Probe<D>[], flowName = 'compliance-battery') {
    this.probes = probes;
    const ids = new Set<string>();
    for (const p of probes) {
      if (ids.has(p.id)) throw new Error(`probe id '${p.id}' is used twice`);
      ids.add(p.id);
    }
    this.flow = {
      name: flowName,
      run: async (api, ctx) => {
        await this.run(api, ctx.data);
      },
    };
  }

  /** The verdicts of the latest run of the flow, in the probes' order (a copy). */
  results(): ProbeResult[] {
    return this.verdicts.map((v) => ({ ...v }));
  }

  /** Runs every probe in order; a probe that throws fails with the error as its detail. */
  async run(api: Api, data: D): Promise<ProbeResult[]> {
    const verdicts: ProbeResult[] = [];
    this.verdicts = verdicts;
    for (const probe of this.probes) {
      let requests = 0;
      const counting = new PetstoreApi(<T>(operationId: string, input?: CallInput) => {
        requests++;
        return api.call<T>(operationId, input);
      });
      const started = now();
      const base = {
        id: probe.id,
        description: probe.description,
        expected: probe.expected,
        ...(probe.source ? { source: probe.source } : {}),
      };
      try {
        const outcome = await probe.run(counting, data);
        verdicts.push({
          ...base,
          actual: outcome.actual,
          passed: outcome.passed,
          ...(outcome.detail ? { detail: outcome.detail } : {}),
          requests,
          durationMs: Math.round(now() - started),
        });
      } catch (error) {
        // The run ended under the probe: it has no verdict, and the run is partial anyway. (By name:
        // a scenario is imported apart from the CLI's modules, so its classes are not the CLI's.)
        if (error instanceof AbortedError || (error as Error)?.name === 'AbortedError') throw error;
        verdicts.push({
          ...base,
          actual: 'the probe failed to run',
          passed: false,
          detail: String((error as Error).message ?? error).slice(0, 300),
          requests,
          durationMs: Math.round(now() - started),
        });
      }
    }
    return verdicts;
  }
}

/**
 * A compliance battery of probes, each run once, in order, by the battery's own flow; name it in the
 * scenario's `probes` and put its `flow` among the flows (a workload of one iteration). Each probe's
 * verdict goes into the result's `probes`; a failed one makes the run exit 1.
 *
 * @example
 * import { defineScenario, expectError, probeBattery } from 'petstore-load';
 *
 * const battery = probeBattery([
 *   {
 *     id: 'auth-missing-key',
 *     description: 'GET /pets without an Authorization header',
 *     expected: '401 Error',
 *     run: async (api) => expectError(await api.call('listPets', { auth: 'none', retry: false }), 401),
 *   },
 * ]);
 *
 * export default defineScenario({
 *   name: 'auth',
 *   workload: { executor: 'constant-vus', vus: 1, iterations: 1 },
 *   flows: [battery.flow],
 *   probes: battery,
 * });
 */
export function probeBattery<D>(probes: readonly Probe<D>[], flowName?: string): ProbeBattery<D> {
  return new ProbeBattery(probes, flowName);
}

/**
 * The verdicts of a scenario's battery after its run, or undefined when it declares none. Duck-typed:
 * a scenario may import another copy of this module (a project's own install of the package, where
 * the CLI that runs it is another), so `instanceof` would not hold.
 */
export function probeResultsOf(scenario: Scenario<unknown>): ProbeResult[] | undefined {
  const battery = scenario.probes as { results?: unknown } | undefined;
  if (!battery || typeof battery.results !== 'function') return undefined;
  const results: unknown = battery.results();
  return Array.isArray(results) ? (results as ProbeResult[]) : undefined;
}

/** `401 Error (unauthorized)`, `200 without an Error body`, `transport error ECONNRESET`: a response in a few words. */
export function describeResponse(response: ApiResponse<unknown>): string {
  if (response.status === 0) return `transport error ${response.error ?? ''}`.trim();
  const body = response.body as { code?: unknown } | undefined;
  if (isErrorBody(response)) return `${response.status} Error (${String(body?.code)})`;
  return response.status >= 400 ? `${response.status} without an Error body` : `${response.status}`;
}

/** The seed's Error object, with `status` equal to the response's status. */
export function isErrorBody(response: ApiResponse<unknown>): boolean {
  const b = response.body as Record<string, unknown> | undefined;
  return (
    !!b &&
    typeof b === 'object' &&
    typeof b.code === 'string' &&
    typeof b.message === 'string' &&
    b.status === response.status
  );
}

/**
 * The common probe: the status expected, and an Error body (`code`, `message`, `status`) whose status
 * agrees with it. A probe's `run` returns it as its outcome.
 */
export function expectError(
  response: ApiResponse<unknown>,
  status: number,
): { passed: boolean; actual: string; detail?: string } {
  const actual = describeResponse(response);
  if (response.status !== status)
    return { passed: false, actual, detail: `expected ${status}, got ${response.status || actual}` };
  if (!isErrorBody(response)) {
    return {
      passed: false,
      actual,
      detail: `the body is not an Error object {code, message, status: ${status}}: ${JSON.stringify(response.body)?.slice(0, 200)}`,
    };
  }
  return { passed: true, actual };
}
