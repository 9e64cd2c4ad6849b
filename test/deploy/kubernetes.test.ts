import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { REPO } from '../helpers/integration-cli.ts';

/**
 * deploy/kubernetes as Kubernetes would read it: an Indexed Job whose completions and parallelism
 * are the fleet's --generators, its scenario mounted from the ConfigMap, and its exact command line
 * resolving, in the environment the Job gives pod 2, to shard 3 of 3 of fleet `nightly`.
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

  it("mounts the ConfigMap's scenario where the command names it, as shipped: catalogue-browse", () => {
    const mount = container?.volumeMounts.find((m) => m.name === 'scenario');
    expect(mount?.mountPath).toBe(`${container?.workingDir}/${args[1]}`);
    const volume = pod?.volumes.find((v) => v.name === 'scenario');
    expect(volume?.configMap?.name).toBe(configMap?.metadata.name);
    expect(configMap?.data?.[mount?.subPath ?? '']).toBe(
      readFileSync(join(REPO, 'scenarios', 'catalogue-browse.ts'), 'utf8'),
    );
  });

  it("resolves pod 2's command line to shard 3 of 3 of fleet nightly, on the Sentinel store", async () => {
    // The mounted file is catalogue-browse's (above): here it is read where the repository keeps it.
    const here = args.map((a) => (a === args[1] ? 'scenarios/catalogue-browse.ts' : a));
    const outcome = await cliInProcess([...here, '--print-config'], {
      JOB_COMPLETION_INDEX: '2',
      PETSTORE_API_KEY: 'from-the-secret',
    });
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
  });
});
