#!/usr/bin/env bash
# Builds etcd, unmodified, from the Go module in this folder, into a cache folder keyed by this
# script, go.mod, go.sum and the Go version; one etcd serves every Kubernetes version
# (../build.sh copies it beside each one's binaries). Prints that folder on stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
etcd_cache="${KUBE_FIXTURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sidecarset/kube-fixture}/etcd"
# shellcheck source=../../cached-build.sh
source "$here/../../cached-build.sh"
cached_build etcd etcd_cache "$here/build.sh" "$here/go.mod" "$here/go.sum" -- etcd

cd "$here"
export CGO_ENABLED=0
echo "kube-fixture: building etcd with $go_version" >&2
start=$SECONDS
go build -trimpath -ldflags="-s -w" -o "$staging/etcd" go.etcd.io/etcd/server/v3
echo "kube-fixture: etcd built in $((SECONDS - start)) s" >&2
cached_build_done
