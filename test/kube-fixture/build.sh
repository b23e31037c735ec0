#!/usr/bin/env bash
# Builds etcd and the Kubernetes binaries of a whole cluster (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kubectl), unmodified, from the Go module in this folder (go.mod and go.sum
# only: no Go source) into a cache folder keyed by this script, go.mod, go.sum and the Go version, so
# only the first build on a machine pays. Prints that folder on stdout; build times go to stderr.
#
#   KUBE_FIXTURE_CACHE  where the keyed folders live
#                       (default: ${XDG_CACHE_HOME:-~/.cache}/sidecarset/kube-fixture)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kube_tools=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kube-proxy)
# shellcheck source=../cached-build.sh
source "$here/../cached-build.sh"
cached_build kube-fixture KUBE_FIXTURE_CACHE "$here/build.sh" "$here/go.mod" "$here/go.sum" \
  -- etcd "${kube_tools[@]}"

cd "$here"
export CGO_ENABLED=0
# The version the binaries report (/version, kubectl version): the k8s.io/kubernetes they are built
# from. Without it they say v0.0.0-master.
k8s="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
minor="$(echo "$k8s" | cut -d. -f2)"
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$k8s -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"

total=$SECONDS
echo "kube-fixture: building etcd with $go_version" >&2
start=$SECONDS
go build -trimpath -ldflags="-s -w" -o "$staging/etcd" go.etcd.io/etcd/server/v3
echo "kube-fixture: etcd built in $((SECONDS - start)) s" >&2
# One go build for the Kubernetes binaries: they share most packages, compiled once, in parallel.
packages=()
for tool in "${kube_tools[@]}"; do packages+=("k8s.io/kubernetes/cmd/$tool"); done
echo "kube-fixture: building ${kube_tools[*]} ($k8s) with $go_version" >&2
start=$SECONDS
go build -trimpath -ldflags="$ldflags" -o "$staging/" "${packages[@]}"
echo "kube-fixture: ${kube_tools[*]} built in $((SECONDS - start)) s" >&2
echo "kube-fixture: all built in $((SECONDS - total)) s" >&2
cached_build_done
