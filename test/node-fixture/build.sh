#!/usr/bin/env bash
# Builds the node's runtime and the test images' programs from the Go module in this folder:
# containerd, containerd-shim-runc-v2 and ctr (unmodified, from the Go module proxy, without cgo:
# the btrfs and devmapper snapshotters drop out, overlayfs stays), the CNI reference plugins of the
# pod network (bridge, host-local, loopback: cni/go.mod, a module of their own so that they move
# none of containerd's dependencies) and images/{testd,pause,mkimage}
# (static, standard library only). The kubelet comes with the control plane (test/kube-fixture);
# runc from Debian. Cached in a folder keyed by this script, go.mod, go.sum, the programs' sources
# and the Go version, as test/kube-fixture/build.sh does. Prints that folder on stdout.
#
#   NODE_FIXTURE_CACHE  where the keyed folders live
#                       (default: ${XDG_CACHE_HOME:-~/.cache}/sidecarset/node-fixture)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runtime=(containerd containerd-shim-runc-v2 ctr)
cni_plugins=(main/bridge ipam/host-local main/loopback)
programs=(testd pause mkimage)
# shellcheck source=../cached-build.sh
source "$here/../cached-build.sh"
cached_build node-fixture NODE_FIXTURE_CACHE "$here/build.sh" "$here/go.mod" "$here/go.sum" \
  "$here/cni/go.mod" "$here/cni/go.sum" "$here"/images/*/*.go \
  -- "${runtime[@]}" "${programs[@]}" "${cni_plugins[@]/#*\//cni/}"

cd "$here"
export CGO_ENABLED=0
containerd_version="$(go list -m -f '{{.Version}}' github.com/containerd/containerd/v2)"
total=$SECONDS
packages=()
for tool in "${runtime[@]}"; do packages+=("github.com/containerd/containerd/v2/cmd/$tool"); done
echo "node-fixture: building ${runtime[*]} ($containerd_version) with $go_version" >&2
start=$SECONDS
go build -trimpath -tags "no_btrfs no_devmapper no_zfs" \
  -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd_version" \
  -o "$staging/" "${packages[@]}"
echo "node-fixture: ${runtime[*]} built in $((SECONDS - start)) s" >&2
start=$SECONDS
packages=()
for plugin in "${cni_plugins[@]}"; do
  packages+=("github.com/containernetworking/plugins/plugins/$plugin")
done
mkdir -p "$staging/cni"
(cd cni && go build -trimpath -ldflags "-s -w" -o "$staging/cni/" "${packages[@]}")
echo "node-fixture: CNI plugins ${cni_plugins[*]##*/} built in $((SECONDS - start)) s" >&2
start=$SECONDS
for program in "${programs[@]}"; do
  go build -trimpath -ldflags "-s -w" -o "$staging/$program" "./images/$program"
done
echo "node-fixture: ${programs[*]} built in $((SECONDS - start)) s" >&2
echo "node-fixture: all built in $((SECONDS - total)) s" >&2
cached_build_done
