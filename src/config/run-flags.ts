import type { Options } from 'yargs';
import { DEFAULTS } from '../api/defaults.ts';
import { CONTRACTS } from '../record/checks/contract.ts';
import { DEFAULT_TOLERANCES, describeTolerance, type Metric } from '../report/tolerances.ts';
import { CHECKPOINT_FILE } from './checkpoint.ts';
import { FLEET_FLAGS } from './fleet-flags.ts';
import { METRICS_FLAGS } from './metrics-flags.ts';
import { NETWORK_FLAGS } from './network-flags.ts';
import { REFUSAL_FLAGS } from './refusal-flags.ts';

const TOLERANCE_DEFAULTS = (Object.keys(DEFAULT_TOLERANCES) as Metric[])
  .map((m) => `${m}=${describeTolerance(m, DEFAULT_TOLERANCES[m]).replace(' pt', '%')}`)
  .join(',');

/** `--max-regression`'s help, as `run --baseline` and `compare` both take it. */
export const MAX_REGRESSION_DESCRIPTION = `Tolerances before a significant change is a regression, e.g. p99=10%,rps=5%,errors=1% (errors and rate_limited in percentage points; default ${TOLERANCE_DEFAULTS})`;

/** The `scenario` positional of `run`. */
export const RUN_SCENARIO = {
  type: 'string',
  default: 'mixed-traffic',
  describe: 'A name in scenarios/ or a path to a .ts file',
} as const satisfies Options;

/** `run`'s options, as data: src/config/run.ts resolves what they give into one RunConfig. */
export const RUN_FLAGS = {
  'base-url': {
    requiresArg: true,
    type: 'string',
    describe: 'Target; without it the reference server is started on 127.0.0.1',
  },
  'api-key': {
    requiresArg: true,
    type: 'string',
    describe: 'API key (or env PETSTORE_API_KEY); never printed or written',
  },
  plan: {
    requiresArg: true,
    type: 'string',
    describe: "Plan to pace for (default: the scenario's, else free)",
  },
  plans: { requiresArg: true, type: 'string', describe: 'JSON file overriding plan limits and windows' },
  'time-scale': {
    requiresArg: true,
    type: 'number',
    describe: `Divide the plan's windows by N (the embedded server runs at ${DEFAULTS.embeddedTimeScale})`,
  },
  duration: { requiresArg: true, type: 'string', describe: 'Run length, e.g. 30s (overrides the scenario)' },
  rate: {
    requiresArg: true,
    conflicts: 'vus',
    type: 'string',
    describe: "Open model: iterations per second, or a share of the plan like '100%'",
  },
  vus: { requiresArg: true, type: 'number', describe: 'Closed model: virtual users' },
  iterations: { requiresArg: true, type: 'number', describe: 'Stop after this many iterations' },
  out: {
    requiresArg: true,
    type: 'string',
    describe: 'Directory for result.json (default reports/<scenario>-<time>/)',
  },
  checkpoint: {
    requiresArg: true,
    type: 'string',
    default: DEFAULTS.checkpointInterval,
    describe: `Write the result so far to ${CHECKPOINT_FILE} beside result.json this often (e.g. 30s; 'off': never), so that a run killed outright keeps what it measured; removed once result.json is written`,
  },
  spec: { requiresArg: true, type: 'string', describe: 'OpenAPI document of the target (default ours)' },
  enforce: {
    choices: ['on', 'off'],
    describe: 'Plan pacing; off (raw mode) exceeds quotas on purpose',
  },
  limiter: {
    type: 'string',
    describe:
      "The target's limiter, when known: gcra or token-bucket (nginx limit_req, most gateways) keep the plan's spacing between any two sends from the start; fixed-window, sliding-window or sliding-counter learn no gap; concurrency:N (nginx limit_conn, Stripe, GitHub's secondary limits) keeps at most N requests of the key in flight, concurrency alone learns N from the 429s. Default: learned from the server's 429s (a 429 that came while others of the key were in flight lowers the key's in-flight cap)",
  },
  contract: {
    choices: CONTRACTS,
    describe:
      "The rate-limit dialect the checks judge as promised: the seed's X-RateLimit-* (Reset a Unix time), another limiter's, ietf (any IETF draft), any (whatever the server speaks) or document (what the --spec document declares per operation and status). Default: document with a --spec of your own, else seed",
  },
  'allow-ban-risk': {
    type: 'boolean',
    default: false,
    describe: 'In raw mode, also lift the ban guard',
  },
  timeout: { requiresArg: true, type: 'string', default: DEFAULTS.timeout, describe: 'Request timeout' },
  'max-attempts': {
    requiresArg: true,
    type: 'number',
    default: DEFAULTS.maxAttempts as number,
    describe: 'Attempts for 5xx and transport errors (idempotent methods)',
  },
  seed: { requiresArg: true, type: 'number', describe: 'Seed of the flow choices, for repeatable runs' },
  quiet: {
    type: 'boolean',
    default: false,
    describe: 'No live status line and no summary table: only the result path',
  },
  threshold: {
    requiresArg: true,
    type: 'string',
    array: true,
    describe:
      "Pass/fail criterion, repeatable: [operation:]metric<op>value, e.g. 'p99<300ms', 'listPets:p95<100ms', 'errors<1%', 'checks>=100%', 'rps>=50', 'quota_utilization>=95%', 'violations==0'. Latency is response time; any failure exits 1",
  },
  'abort-on-fail': {
    type: 'boolean',
    default: false,
    describe: 'End the run as soon as a --threshold fails for good (judged each second)',
  },
  'delay-abort-eval': {
    requiresArg: true,
    type: 'string',
    describe: 'With --abort-on-fail: how long the workload runs before thresholds are judged, e.g. 10s',
  },
  baseline: {
    requiresArg: true,
    type: 'string',
    describe: 'Compare with this earlier result.json; exit 1 on a significant regression',
  },
  'max-regression': { requiresArg: true, type: 'string', describe: MAX_REGRESSION_DESCRIPTION },
  junit: {
    requiresArg: true,
    type: 'string',
    describe: 'Write JUnit XML: a testcase per threshold and per check',
  },
  'summary-md': {
    requiresArg: true,
    type: 'string',
    describe: 'Write a markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)',
  },
  'quota-store': {
    requiresArg: true,
    type: 'string',
    describe:
      "redis://HOST:PORT, or redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER for a Sentinel-watched master: share the key's pacing and 429 pauses with every generator naming the same store (other machines, shards). A store that goes away is waited for, never sent around (see --store-outage)",
  },
  'store-outage': {
    requiresArg: true,
    choices: ['wait', 'local-share'],
    default: 'wait',
    describe:
      'While the --quota-store is away: wait for it (nothing is sent without a reservation), or local-share: each generator paces alone at its share of the plan (1/N of --shard I/N and --workers), told to the store when it is back',
  },
  workers: {
    requiresArg: true,
    type: 'number',
    default: 1,
    describe:
      "Worker threads sharing the workload (one core each); the key's quota stays one, their results are merged",
  },
  tenants: {
    requiresArg: true,
    type: 'string',
    describe:
      "CSV or JSON file of a tenant mix's keys on your target (plan,key[,name]; a key may be env:VAR): each key paced by its own plan; never printed or written. Without it, a scenario's `tenants` run on the embedded server's minted keys",
  },
  shard: {
    requiresArg: true,
    type: 'string',
    describe:
      "I/N: run part I of N of the workload (rates divided, VUs and iterations split); 'merge' joins the parts",
  },
  ...FLEET_FLAGS,
  ...METRICS_FLAGS,
  ...NETWORK_FLAGS,
  ...REFUSAL_FLAGS,
  'auth-header': {
    requiresArg: true,
    type: 'string',
    describe:
      "Send the key in this header, as-is, for every operation, over what the document's security schemes say (Authorization keeps Bearer)",
  },
  'print-config': {
    type: 'boolean',
    default: false,
    describe:
      'Print the resolved configuration as JSON (the key only as where it came from) and exit: nothing started or sent',
  },
} as const satisfies Record<string, Options>;
