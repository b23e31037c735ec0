#!/usr/bin/env bash
# Builds helm, unmodified, from the Go module in this folder (go.mod and go.sum only: no Go source)
# into a cache folder keyed by this script, go.mod, go.sum and the Go version, as
# test/kube-fixture/build.sh does for the control plane. A module of its own so that helm's
# k8s.io/* versions never move kube-apiserver's (docs/adr/0010-helm-chart.md). Prints that folder.
#
#   HELM_FIXTURE_CACHE  where the keyed folders live
#                       (default: ${XDG_CACHE_HOME:-~/.cache}/sidecarset/helm-fixture)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../cached-build.sh
source "$here/../cached-build.sh"
cached_build helm-fixture HELM_FIXTURE_CACHE "$here/build.sh" "$here/go.mod" "$here/go.sum" -- helm

cd "$here"
export CGO_ENABLED=0
helm_version="$(go list -m -f '{{.Version}}' helm.sh/helm/v3)"
# As helm's Makefile links it: the version `helm version` reports, and the Kubernetes version that
# `helm template` and `helm lint` assume (client-go v0.N is Kubernetes 1.N; unset, helm assumes 1.20
# and refuses charts whose kubeVersion asks for more).
k8s_minor="$(go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done
echo "helm-fixture: building helm $helm_version with $go_version" >&2
start=$SECONDS
go build -trimpath -ldflags="$ldflags" -o "$staging/helm" helm.sh/helm/v3/cmd/helm
echo "helm-fixture: helm built in $((SECONDS - start)) s" >&2
cached_build_done
