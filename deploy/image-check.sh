#!/usr/bin/env bash
# Builds deploy/Dockerfile and runs a user's scenario in the image, on a machine that reaches no
# container registry (CI): buildah, from Debian, as root. It
#   1. packs the package (`npm pack`, its pack scripts included: run `npm ci` first) into a temporary folder,
#      the build's whole context (or takes PETSTORE_LOAD_TGZ, a tarball already packed);
#   2. assembles a stand-in for the Dockerfile's base image (node:20-bookworm-slim) from this
#      machine's own Node, npm, a shell and the shared libraries `ldd` lists, with the official
#      image's `node` user (uid 1000), and tags it with the name the Dockerfile's FROM gives;
#   3. builds deploy/Dockerfile with pulling disabled;
#   4. runs the image's entrypoint on a user's folder mounted at /load, holding a scenario that
#      imports `petstore-load` by name, for 3 s against the embedded reference server (loopback),
#      and checks the exit status, the result.json on the host side and that uid 1000 wrote it.
# Its storage (vfs) lives in a temporary folder, removed on any exit with everything else it made:
# nothing of the machine's own containers is touched, and two runs never meet. Processes run with
# buildah's chroot isolation (the default OCI runtime cannot create containers in a sandbox).
# Needs Debian's `buildah` (`apt-get install -y buildah`) and `node`/`npm` on PATH. Runs from any
# folder: `deploy/image-check.sh`. The last line says `image-check: ok (...)`.
set -euo pipefail

say() { printf 'image-check: %s\n' "$*"; }
die() { say "FAILED: $*" >&2; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
dockerfile="$here/Dockerfile"
[ "$(id -u)" = 0 ] || die "run as root (buildah's vfs storage and chroot isolation need it)"
command -v buildah >/dev/null || die "buildah is not installed (apt-get install -y buildah)"
{ command -v node && command -v npm; } >/dev/null || die "node and npm must be on PATH"

work=$(mktemp -d "${TMPDIR:-/tmp}/petstore-load-image-check.XXXXXX")
bah() { buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs "$@"; }
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ -d "$work/storage" ]; then
    bah rm --all >/dev/null 2>&1 || true
    bah rmi --all --force >/dev/null 2>&1 || true
    # Whatever storage left mounted under the folder (none with vfs, as a rule).
    findmnt -rn -o TARGET | grep -F "$work/" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'say "interrupted" >&2; exit 130' INT
trap 'say "terminated" >&2; exit 143' TERM

seconds() { echo $((SECONDS - $1)); }
started=$SECONDS

# The base image's name as the Dockerfile's FROM gives it (its NODE_IMAGE argument's default), fully
# qualified as a registry would know it: node:20-bookworm-slim is docker.io/library/node:20-bookworm-slim.
from=$(sed -n 's/^ARG NODE_IMAGE=//p' "$dockerfile" | head -1)
[ -n "$from" ] || die "no 'ARG NODE_IMAGE=' in $dockerfile"
case "$from" in
  */*/* | localhost/* | *.*/* | *:*/*) base=$from ;;
  */*) base="docker.io/$from" ;;
  *) base="docker.io/library/$from" ;;
esac
image="localhost/petstore-load:image-check"

# 1. The package, packed: the build's context is this folder and nothing else.
t=$SECONDS
mkdir -p "$work/context"
if [ -n "${PETSTORE_LOAD_TGZ:-}" ]; then
  cp "$PETSTORE_LOAD_TGZ" "$work/context/"
else
  (cd "$repo" && npm pack --pack-destination "$work/context") >"$work/pack.log" 2>&1 ||
    { cat "$work/pack.log" >&2; die "npm pack failed"; }
fi
tgz=$(cd "$work/context" && ls -- *.tgz)
[ "$(wc -l <<<"$tgz")" = 1 ] || die "expected one tarball, found: $tgz"
say "packed $tgz ($(du -k "$work/context/$tgz" | cut -f1) KiB, $(seconds "$t") s)"

# 2. The stand-in base: this machine's Node and npm where the official image keeps them, a shell for
# RUN, the shared libraries they load, and the official image's users.
t=$SECONDS
ctr=$(bah from scratch)
root=$(bah mount "$ctr")
node_bin=$(readlink -f "$(command -v node)")
npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
mkdir -p "$root"/{usr/local/bin,usr/local/lib/node_modules,bin,usr/bin,etc,root,tmp,home/node}
install -m 0755 "$node_bin" "$root/usr/local/bin/node"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# A shell and the few commands of coreutils a Dockerfile's RUN may use, as the slim image has them.
install -m 0755 "$(readlink -f /bin/sh)" "$root/bin/sh"
tools=("$node_bin" "$root/bin/sh")
for tool in env id ls cat cp mv rm ln mkdir chmod chown; do
  install -m 0755 "$(readlink -f "$(command -v "$tool")")" "$root/usr/bin/$tool"
  tools+=("$root/usr/bin/$tool")
done
for lib in $(ldd "${tools[@]}" | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
node:x:1000:1000::/home/node:/bin/sh
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
node:x:1000:
EOF
[ -f /etc/nsswitch.conf ] && cp /etc/nsswitch.conf "$root/etc/"
chmod 1777 "$root/tmp"
chown 1000:1000 "$root/home/node"
base_env=(--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  --env "NODE_VERSION=$(node -p 'process.versions.node')"
  --env "NPM_CONFIG_REGISTRY=$(npm config get registry)")
# This machine's extra certificate authorities (a registry reached through an inspecting proxy),
# where Node is told of them: npm in the build needs them as much as npm here.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  mkdir -p "$root$(dirname "$NODE_EXTRA_CA_CERTS")"
  cp -L "$NODE_EXTRA_CA_CERTS" "$root$NODE_EXTRA_CA_CERTS"
  base_env+=(--env "NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS")
fi
bah umount "$ctr" >/dev/null
bah config "${base_env[@]}" --cmd node --workingdir / \
  --label "org.opencontainers.image.description=petstore-load image-check's local stand-in for $from" "$ctr"
bah commit --quiet --rm "$ctr" "$base" >/dev/null
bah run --isolation chroot "$(bah from --pull=never "$base")" -- node -e '' ||
  die "the stand-in base does not run node"
bah rm --all >/dev/null
say "base $base assembled from $node_bin (Node $(node --version)) ($(seconds "$t") s)"

# 3. The image, built as a user would build it, pulling nothing.
t=$SECONDS
bah bud --isolation chroot --pull=never --quiet -f "$dockerfile" -t "$image" "$work/context" \
  >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "the build failed"; }
built=$(seconds "$t")
size=$(bah images --format '{{.Size}}' "$image")
bah inspect --type image "$image" >"$work/image.json"
config() { node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).OCIv1.config;
  console.log(JSON.stringify(c[process.argv[2]] ?? ""))' "$work/image.json" "$1"; }
user=$(config User | tr -d '"')
entrypoint=$(config Entrypoint)
say "built $image from deploy/Dockerfile ($size, user $user, entrypoint $entrypoint) ($built s)"
case "${user%%:*}" in '' | 0 | root) die "the image runs as root" ;; esac

# 4. A user's folder, mounted at /load: a scenario importing the package by name, run through the
# image's entrypoint as the image's user, against the embedded server.
t=$SECONDS
load="$work/load"
mkdir -p "$load"
cat >"$load/browse.ts" <<'EOF'
import { defineScenario } from 'petstore-load';

/** A user's scenario, in the user's repository: two virtual users listing pets. */
export default defineScenario({
  name: 'browse',
  workload: { executor: 'constant-vus', vus: 2, duration: '3s' },
  flows: [
    {
      name: 'list-pets',
      run: async (api) => {
        await api.listPets({ limit: 10 });
      },
    },
  ],
});
EOF
chown -R 1000:1000 "$load"
mapfile -t cmd < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "$entrypoint")
run_ctr=$(bah from --pull=never "$image")
set +e
timeout -k 10 180 buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs \
  run --isolation chroot --volume "$load:/load" "$run_ctr" -- \
  "${cmd[@]}" run browse.ts --duration 3s --out out --quiet >"$work/run.log" 2>&1 </dev/null
code=$?
set -e
sed 's/^/  | /' "$work/run.log"
[ "$code" = 0 ] || die "the run exited $code"
result="$load/out/result.json"
[ -s "$result" ] || die "no $result on the host side"
owner=$(stat -c %u "$result")
[ "$owner" != 0 ] || die "result.json was written by root"
# What the run measured, as the result says: the scenario, requests sent to the embedded server.
# shellcheck disable=SC2016 # JavaScript's template literal, not the shell's
summary=$(node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const ok = r.meta.scenario === "browse" && r.meta.embeddedTarget && r.overall.requests > 0;
  console.log(`${ok ? "" : "unexpected: "}scenario ${r.meta.scenario}, ${r.overall.requests} requests ` +
    `(statuses ${JSON.stringify(r.overall.statuses)}) to the embedded server, Node ${r.meta.nodeVersion}`);
  process.exitCode = ok ? 0 : 1;' "$result") || die "$summary"
# The image's user, as the process inside sees itself.
uid=$(bah run --isolation chroot "$run_ctr" -- id -u)
[ "$uid" != 0 ] || die "the image's process runs as root"
modules=$(du -sm "$(bah mount "$run_ctr")/node_modules" | cut -f1)
bah umount "$run_ctr" >/dev/null
say "ran browse.ts from /load: exit $code; out/result.json written by uid $owner (id -u inside: $uid): $summary ($(seconds "$t") s)"

say "ok (built in $built s, image $size of which /node_modules $modules MB, run exit $code, $(seconds "$started") s in all)"
