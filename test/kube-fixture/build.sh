#!/usr/bin/env bash
# Builds the binaries of a whole cluster of one Kubernetes version (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl), unmodified, from the Go
# module kubernetes/MINOR/ in this folder (go.mod and go.sum only: no Go source), with etcd beside
# them (etcd/build.sh, built once for every version), into a cache folder per version keyed by the
# modules, this script and the Go version, so only the first build on a machine pays. Prints that
# folder on stdout; build times go to stderr.
#
#   build.sh [MINOR]    MINOR: one of kubernetes/ (1.30, 1.33, 1.37…); the newest by default
#
#   KUBE_FIXTURE_CACHE  where the keyed folders live, one folder per version
#                       (default: ${XDG_CACHE_HOME:-~/.cache}/sidecarset/kube-fixture)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
minor="${1:-$(ls "$here/kubernetes" | sort -V | tail -n 1)}"
module="$here/kubernetes/$minor"
if [ ! -f "$module/go.mod" ]; then
  echo "kube-fixture: no Kubernetes $minor here; test/kube-fixture/kubernetes/ has:" \
    "$(ls "$here/kubernetes" | sort -V | tr '\n' ' ')" >&2
  exit 2
fi
kube_tools=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kube-proxy)
etcd_dir="$(bash "$here/etcd/build.sh" | tail -n 1)"
kube_cache="${KUBE_FIXTURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sidecarset/kube-fixture}/$minor"
# shellcheck source=../cached-build.sh
source "$here/../cached-build.sh"
cached_build kube-fixture kube_cache "$here/build.sh" "$module/go.mod" "$module/go.sum" \
  "$here/etcd/go.mod" "$here/etcd/go.sum" -- etcd "${kube_tools[@]}"

cd "$module"
export CGO_ENABLED=0
# The version the binaries report (/version, kubectl version): the k8s.io/kubernetes they are built
# from. Without it they say v0.0.0-master.
k8s="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
minor_number="$(echo "$k8s" | cut -d. -f2)"
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$k8s -X $v.gitMajor=1 -X $v.gitMinor=$minor_number"
ldflags="$ldflags -X $v.gitTreeState=clean"
# One go build for the Kubernetes binaries: they share most packages, compiled once, in parallel.
packages=()
for tool in "${kube_tools[@]}"; do packages+=("k8s.io/kubernetes/cmd/$tool"); done
echo "kube-fixture: building ${kube_tools[*]} ($k8s) with $go_version" >&2
start=$SECONDS
go build -trimpath -ldflags="$ldflags" -o "$staging/" "${packages[@]}"
echo "kube-fixture: ${kube_tools[*]} ($k8s) built in $((SECONDS - start)) s" >&2
cp "$etcd_dir/etcd" "$staging/etcd"
cached_build_done
