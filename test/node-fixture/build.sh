#!/usr/bin/env bash
# Builds the node's runtime and the test images' programs from the Go module in this folder:
# containerd, containerd-shim-runc-v2 and ctr (unmodified, from the Go module proxy, without cgo:
# the btrfs and devmapper snapshotters drop out, overlayfs stays), and images/{testd,pause,mkimage}
# (static, standard library only). The kubelet comes with the control plane (test/kube-fixture);
# runc from Debian. Cached in a folder keyed by this script, go.mod, go.sum, the programs' sources
# and the Go version, as test/kube-fixture/build.sh does. Prints that folder on stdout.
#
#   NODE_FIXTURE_CACHE  where the keyed folders live
#                       (default: ${XDG_CACHE_HOME:-~/.cache}/sidecarset/node-fixture)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
go_version="$(go env GOVERSION)"
key="$(cat "$here/build.sh" "$here/go.mod" "$here/go.sum" "$here"/images/*/*.go | sha256sum | cut -c1-16)-$go_version"
root="${NODE_FIXTURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sidecarset/node-fixture}"
out="$root/$key"
runtime=(containerd containerd-shim-runc-v2 ctr)
programs=(testd pause mkimage)

mkdir -p "$root"
exec 9>"$root/.lock"
flock 9

complete=true
for tool in "${runtime[@]}" "${programs[@]}"; do [ -x "$out/$tool" ] || complete=false; done
if [ "$complete" = true ]; then
  echo "$out"
  exit 0
fi

cd "$here"
export CGO_ENABLED=0
containerd_version="$(go list -m -f '{{.Version}}' github.com/containerd/containerd/v2)"
staging="$(mktemp -d "$root/.build-XXXXXX")"
trap 'rm -rf "$staging"' EXIT
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
for program in "${programs[@]}"; do
  go build -trimpath -ldflags "-s -w" -o "$staging/$program" "./images/$program"
done
echo "node-fixture: ${programs[*]} built in $((SECONDS - start)) s" >&2
echo "node-fixture: all built in $((SECONDS - total)) s" >&2
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
# Builds for other inputs are dead weight (about 80 MB each).
for old in "$root"/*; do
  [ "$old" = "$out" ] || rm -rf "$old"
done
echo "$out"
