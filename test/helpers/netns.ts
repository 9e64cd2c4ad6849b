import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Hosts of their own on one machine: a network namespace each, with an address on a /24 behind a
 * bridge (veth pairs), made with `ip` from iproute2 (root needed; `.ci/run` runs as root). The fleet
 * tests put each generator, the store and the target on their own host, so that nothing depends on
 * every process sharing loopback. Names and the subnet carry the test's pid: runs side by side do
 * not meet. A step that fails throws one line saying which and why; the test fails, never skips.
 */
export interface Hosts {
  /** The namespace of a host, for `ip netns exec`. */
  ns(host: string): string;
  /** The host's address (`k`: its second, for a second server at the same port). */
  address(host: string, k?: number): string;
  /** What runs a command inside the host's namespace: `ip netns exec NS`, before the command. */
  within(host: string): string[];
  /** Writes the host's /etc/hosts (as `ip netns exec` shows it to what it starts there). */
  names(host: string, map: Record<string, string>): void;
  /** Drops the host's packets to `to` (a partition), or lets them through again. */
  cut(host: string, to: string, cut: boolean): void;
  remove(): void;
}

function ip(args: string[], what: string): void {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  if (run.error || run.status !== 0)
    throw new Error(
      `cannot ${what} (ip ${args.join(' ')}): ${run.error?.message ?? run.stderr.trim().split('\n')[0]}; the fleet tests need root and iproute2 (apt-get install -y iproute2)`,
    );
}

/**
 * `hosts`: each name and how many addresses it gets (a second one serves a second server at the
 * same port). The bridge has no address: the test's own process reaches none of them.
 */
export function makeHosts(hosts: Record<string, number>): Hosts {
  const tag = `pl${process.pid % 100000}`;
  const subnet = `10.213.${process.pid % 250}`;
  const bridge = `${tag}b`;
  const made: string[] = [];
  const addresses = new Map<string, string[]>();
  const remove = () => {
    for (const ns of made) {
      spawnSync('ip', ['netns', 'del', ns]);
      rmSync(join('/etc/netns', ns), { recursive: true, force: true });
    }
    spawnSync('ip', ['link', 'del', bridge]);
  };
  remove();
  try {
    ip(['link', 'add', bridge, 'type', 'bridge'], 'create a bridge');
    ip(['link', 'set', bridge, 'up'], 'bring the bridge up');
    let next = 1;
    Object.entries(hosts).forEach(([host, count], i) => {
      const ns = `${tag}-${host}`;
      ip(['netns', 'add', ns], 'create a network namespace');
      made.push(ns);
      const outer = `${tag}v${i}`;
      ip(['link', 'add', outer, 'type', 'veth', 'peer', 'name', `${tag}p${i}`], 'create a veth pair');
      ip(['link', 'set', `${tag}p${i}`, 'netns', ns], 'move a veth into its namespace');
      ip(['link', 'set', outer, 'master', bridge, 'up'], 'attach a veth to the bridge');
      ip(['-n', ns, 'link', 'set', `${tag}p${i}`, 'name', 'eth0'], 'name the veth');
      const own: string[] = [];
      for (let k = 0; k < count; k++) {
        const address = `${subnet}.${next++}`;
        ip(['-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0'], 'give an address');
        own.push(address);
      }
      ip(['-n', ns, 'link', 'set', 'eth0', 'up'], 'bring the veth up');
      ip(['-n', ns, 'link', 'set', 'lo', 'up'], 'bring loopback up');
      addresses.set(host, own);
    });
  } catch (error) {
    remove();
    throw error;
  }
  const ns = (host: string) => `${tag}-${host}`;
  return {
    ns,
    address: (host, k = 0) => addresses.get(host)?.[k] ?? '',
    within: (host) => ['ip', 'netns', 'exec', ns(host)],
    names(host, map) {
      const dir = join('/etc/netns', ns(host));
      mkdirSync(dir, { recursive: true });
      const lines = Object.entries(map).map(([name, address]) => `${address} ${name}`);
      writeFileSync(join(dir, 'hosts'), `127.0.0.1 localhost\n${lines.join('\n')}\n`);
    },
    cut(host, to, cut) {
      ip(['-n', ns(host), 'route', cut ? 'add' : 'del', 'blackhole', `${to}/32`], 'cut a route');
    },
    remove,
  };
}
