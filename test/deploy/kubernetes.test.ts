import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { REPO } from '../helpers/integration-cli.ts';

/**
 * deploy/kubernetes as Kubernetes would read it: an Indexed Job whose completions and parallelism
 * are the fleet's --generators, its scenario mounted from the ConfigMap (a file alone, importing
 * `petstore-load` by name, as deploy/Dockerfile's image finds it), and its exact command line
 * resolving, in the environment the Job gives pod 2, to shard 3 of 3 of fleet `nightly`.
 * (deploy/image-check.sh builds that image and runs a scenario in it.)
 */
const DIR = join(REPO, 'deploy', 'kubernetes');

/** As much of the manifests as the test reads. */
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    completionMode: string;
    completions: number;
    parallelism: number;
    template: {
      spec: {
        restartPolicy: string;
        containers: {
          workingDir: string;
          args: string[];
          volumeMounts: { name: string; mountPath: string; subPath?: string }[];
        }[];
        volumes: { name: string; configMap?: { name: string } }[];
      };
    };
  };
}
const read = (file: string) =>
  parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => d.toJS() as Manifest);

const [job] = read('fleet-job.yaml');
const [configMap] = read('scenario-configmap.yaml');
const pod = job?.spec?.template.spec;
const container = pod?.containers[0];
const args: string[] = container?.args ?? [];
const flag = (name: string) => args[args.indexOf(name) + 1];

describe('the fleet as a Kubernetes Indexed Job', () => {
  it('runs --generators pods at once, indexed, never retried', () => {
    expect(job).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job' });
    expect(job?.spec?.completionMode).toBe('Indexed');
    expect(job?.spec?.completions).toBe(Number(flag('--generators')));
    expect(job?.spec?.parallelism).toBe(Number(flag('--generators')));
    expect(pod?.restartPolicy).toBe('Never');
  });

  const mount = container?.volumeMounts.find((m) => m.name === 'scenario');
  const scenario = configMap?.data?.[mount?.subPath ?? ''] ?? '';

  it("mounts the ConfigMap's scenario where the command names it: a file alone, importing the package by name", () => {
    expect(mount?.mountPath).toBe(`${container?.workingDir}/${args[1]}`);
    const volume = pod?.volumes.find((v) => v.name === 'scenario');
    expect(volume?.configMap?.name).toBe(configMap?.metadata.name);
    // Nothing but the package: no file beside it in the pod, no source tree in the image.
    const imported = [...scenario.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    expect(imported).toEqual(['petstore-load']);
  });

  it("resolves pod 2's command line to shard 3 of 3 of fleet nightly, on the Sentinel store, running catalogue-browse", async () => {
    // The ConfigMap's file in a folder of its own, the package in a node_modules folder above it: as
    // the image has /load/fleet.ts and /node_modules/petstore-load.
    const root = mkdtempSync(join(tmpdir(), 'petstore-load-k8s-'));
    try {
      mkdirSync(join(root, 'node_modules'));
      symlinkSync(REPO, join(root, 'node_modules', 'petstore-load'), 'dir');
      mkdirSync(join(root, 'load'));
      writeFileSync(join(root, 'load', mount?.subPath ?? 'fleet.ts'), scenario);
      const env = { JOB_COMPLETION_INDEX: '2', PETSTORE_API_KEY: 'from-the-secret' };
      const asMounted = args.map((a, i) => (i === 1 ? join(root, 'load', a) : a));
      const outcome = await cliInProcess([...asMounted, '--print-config'], env);
      expect(outcome.code, outcome.stderr).toBe(0);
      const config = JSON.parse(outcome.stdout);
      expect(config.shard).toBe('3/3');
      expect(config.fleet).toMatchObject({
        name: 'nightly',
        generators: 3,
        index: 3,
        indexFrom: 'JOB_COMPLETION_INDEX',
      });
      expect(config.quotaStore).toBe('redis+sentinel://redis:26379/mymaster');
      expect(JSON.stringify(config)).not.toContain('from-the-secret');
      // As shipped it is catalogue-browse: the same command line on the repository's file says the same.
      const shipped = args.map((a, i) => (i === 1 ? 'scenarios/catalogue-browse.ts' : a));
      const expected = JSON.parse((await cliInProcess([...shipped, '--print-config'], env)).stdout);
      expect(config.scenario).toBe('catalogue-browse');
      expect({ workload: config.workload, plan: config.plan }).toEqual({
        workload: expected.workload,
        plan: expected.plan,
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
