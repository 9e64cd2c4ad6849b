import type { Operation } from '../api/operations.ts';
import { mostAdmitted } from '../api/plan-admits.ts';
import { planRate } from '../api/plans.ts';
import { answeredCount } from '../record/errors.ts';
import { encodeHistogram, latencyStats } from '../record/histogram.ts';
import type { OperationStats, Recorder } from '../record/recorder.ts';
import { tenantFigures } from './build-tenants.ts';
import {
  type Compliance,
  type HeaderDialect,
  type HeldByLimiterSeen,
  type OperationSummary,
  type ResultMeta,
  type RunConfig,
  type RunResult,
  SCHEMA_VERSION,
  type WorkloadSummary,
} from './types.ts';

function summarise(stats: OperationStats, seconds: number): OperationSummary {
  return {
    requests: stats.requests,
    rate: seconds > 0 ? stats.duringWorkload / seconds : 0,
    statuses: { ...stats.statuses },
    rateLimited: stats.rateLimited,
    refusals: { ...stats.refusals },
    rateLimitedRate: stats.requests ? stats.rateLimited / stats.requests : 0,
    retries: stats.retries,
    transportErrors: { ...stats.transportErrors },
    protocols: protocolCounts(stats),
    pacingWaitMs: Math.round(stats.pacingWaitMs),
    backoffWaitMs: Math.round(stats.backoffWaitMs),
    checkFailures: stats.checkFailures,
    service: latencyStats(stats.service),
    response: latencyStats(stats.response),
    histograms: { service: encodeHistogram(stats.service), response: encodeHistogram(stats.response) },
  };
}

/** The requests' waits under the server's told budget, when any waited so. */
function budgetWaitOf(recorder: Recorder): { budgetWaitMs?: number } {
  const ms = Math.round(recorder.overall.budgetWaitMs);
  return ms > 0 ? { budgetWaitMs: ms } : {};
}

/** Responses by protocol: those over HTTP/2 counted, the rest of the answers HTTP/1.1. */
function protocolCounts(stats: OperationStats): Record<string, number> {
  const http1 = answeredCount(stats) - stats.http2;
  return {
    ...(http1 > 0 ? { 'HTTP/1.1': http1 } : {}),
    ...(stats.http2 > 0 ? { 'HTTP/2': stats.http2 } : {}),
  };
}

function heldByLimiterOf(recorder: Recorder): { heldByLimiter?: HeldByLimiterSeen } {
  const held = recorder.held.snapshot();
  if (!held) return {};
  const { unheld, ...figures } = held;
  return {
    heldByLimiter: { ...figures, unheld: latencyStats(unheld), unheldHistogram: encodeHistogram(unheld) },
  };
}

/** The limiter's refusals by status, and what may have been one: a bare 503, a bare 403 after admissions. */
function refusalsOf(
  recorder: Recorder,
): Pick<Compliance, 'refusals' | 'unexplained' | 'forbiddenAfterAdmitted'> {
  const o = recorder.overall;
  const forbidden = recorder.forbiddenAfterAdmitted;
  return {
    refusals: { ...o.refusals },
    ...(o.unexplained > 0 ? { unexplained: o.unexplained } : {}),
    ...(forbidden > 0 ? { forbiddenAfterAdmitted: forbidden } : {}),
  };
}

function headerDialectOf(recorder: Recorder): { headerDialect?: HeaderDialect } {
  const headerDialect = recorder.headerDialect();
  return headerDialect ? { headerDialect } : {};
}

export interface BuildInput {
  meta: Omit<ResultMeta, 'tool' | 'durationSeconds'>;
  config: RunConfig;
  recorder: Recorder;
  operations: Operation[];
  workload: WorkloadSummary;
}

export function buildResult({ meta, config, recorder, operations, workload }: BuildInput): RunResult {
  const seconds = Math.max(0.001, (Date.parse(meta.endedAt) - Date.parse(meta.startedAt)) / 1000);
  const overall = summarise(recorder.overall, seconds);
  const admitted = recorder.admittedDuringWorkload;
  // A tenant mix's quota is every key's: the run's own plan only paced setup.
  const rate = recorder.tenants ? recorder.tenants.planRate : planRate(config.windows);
  const most = recorder.tenants ? rate * seconds : mostAdmitted(config.windows, seconds * 1000);
  return {
    schemaVersion: SCHEMA_VERSION,
    meta: { tool: 'petstore-load', ...meta, durationSeconds: Math.round(seconds * 1000) / 1000 },
    config,
    overall,
    operations: Object.fromEntries(
      operations
        .filter((op) => recorder.operations.has(op.id))
        .map((op) => [
          op.id,
          {
            method: op.method,
            path: op.path,
            deprecated: op.deprecated,
            stability: op.stability,
            ...summarise(recorder.operations.get(op.id) as OperationStats, seconds),
          },
        ]),
    ),
    timeline: recorder.timeline.snapshot(),
    operationTimelines: recorder.operationTimelines(),
    quota: recorder.quota.snapshot(),
    checks: recorder.checks.snapshot(),
    compliance: {
      rateLimited: overall.rateLimited,
      rateLimitedRate: overall.rateLimitedRate,
      retries: overall.retries,
      violations: recorder.violations.count,
      violationSamples: [...recorder.violations.samples],
      pacingWaitMs: overall.pacingWaitMs,
      backoffWaitMs: overall.backoffWaitMs,
      ...budgetWaitOf(recorder),
      admitted,
      planRate: rate,
      quotaUtilization: most > 0 ? admitted / most : 0,
      ...refusalsOf(recorder),
      ...headerDialectOf(recorder),
      ...heldByLimiterOf(recorder),
    },
    workload,
    ...tenantFigures(recorder.tenants, seconds),
  };
}
