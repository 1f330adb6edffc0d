#!/usr/bin/env bash
# Builds the pinned tools that the local control plane, the tests and the lint
# step run, from their Go modules under hack/tools/<tool>/, into
#   .cache/tools/<tool>/<version>/<binary>
# A binary already in the cache is not rebuilt; the version comes from the
# tool module's own go.mod, so bumping it there is all an upgrade takes.
#
# Usage: hack/tools/build.sh [tool ...]   (tools: kube etcd helm golangci-lint promtool node)
# With no tool, builds all but node (kubelet, kube-scheduler, kube-proxy),
# which only the node test needs.
# Prints the directory of each tool's binaries on stdout, one line per tool,
# as NAME=DIR, and links every binary into .cache/bin; progress goes to stderr.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${APPLY_HYGIENE_TOOLS_CACHE:-$root/.cache/tools}
# Every binary is also linked into one flat directory, where the Makefile,
# test/e2e/framework/controlplane and the e2e tests look for it.
bin=${APPLY_HYGIENE_BIN_DIR:-$root/.cache/bin}
export CGO_ENABLED=0 GOFLAGS=-mod=mod

log() { printf '[tools] %s\n' "$*" >&2; }

# module_version MODULE_DIR MODULE prints the version the tool module requires.
module_version() {
  (cd "$1" && go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$2")
}

# build TOOL VERSION LDFLAGS NAME=PACKAGE... builds each package into the cache.
build() {
  local tool=$1 version=$2 ldflags=$3
  shift 3
  local dir=$cache/$tool/$version
  mkdir -p "$dir"
  local spec name pkg
  for spec in "$@"; do
    name=${spec%%=*}
    pkg=${spec#*=}
    if [[ -x $dir/$name ]]; then
      log "$name $version: cached"
      continue
    fi
    log "$name $version: building $pkg (the first build takes several minutes on 2 cores)"
    local start=$SECONDS
    (cd "$root/hack/tools/$tool" && go build -trimpath -ldflags "$ldflags" -o "$dir/$name.tmp" "$pkg")
    mv "$dir/$name.tmp" "$dir/$name"
    log "$name $version: built in $((SECONDS - start))s"
  done
  mkdir -p "$bin"
  for spec in "$@"; do
    name=${spec%%=*}
    # Relative to the real directories: a worktree's or a clone's .cache is
    # often a link to one shared cache, and an absolute link would break
    # when the checkout that last linked it is removed.
    ln -sfn "$(realpath -m --relative-to="$(realpath -m "$bin")" "$(realpath -m "$dir/$name")")" "$bin/$name"
  done
  printf '%s=%s\n' "$tool" "$dir"
}

# kube_ldflags VERSION prints the link flags of every Kubernetes binary.
kube_ldflags() {
  local v=$1
  local major=${v#v}
  major=${major%%.*}
  local minor=${v#v*.}
  minor=${minor%%.*}
  # kubectl refuses to parse a server version it cannot read, and the
  # apiserver's compatibility version is derived from it: stamp both
  # version packages the way the Kubernetes release build does.
  local ld="-s -w"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "$ld"
}

kube() {
  local v
  v=$(module_version "$root/hack/tools/kube" k8s.io/kubernetes)
  build kube "$v" "$(kube_ldflags "$v")" \
    kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver \
    kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager \
    kubectl=k8s.io/kubernetes/cmd/kubectl
}

# node builds what a node adds to the control plane, for test/e2e/node: the
# kubelet, kube-scheduler (or Pods stay Pending) and kube-proxy (the server's
# Pods reach the API server through the kubernetes Service).
node() {
  local v
  v=$(module_version "$root/hack/tools/kube" k8s.io/kubernetes)
  build kube "$v" "$(kube_ldflags "$v")" \
    kubelet=k8s.io/kubernetes/cmd/kubelet \
    kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler \
    kube-proxy=k8s.io/kubernetes/cmd/kube-proxy
}

etcd() {
  local v
  v=$(module_version "$root/hack/tools/etcd" go.etcd.io/etcd/server/v3)
  build etcd "$v" "-s -w" etcd=go.etcd.io/etcd/server/v3
}

helm() {
  local v
  v=$(module_version "$root/hack/tools/helm" helm.sh/helm/v3)
  build helm "$v" "-s -w -X helm.sh/helm/v3/internal/version.version=$v" helm=helm.sh/helm/v3/cmd/helm
}

golangci_lint() {
  local v
  v=$(module_version "$root/hack/tools/golangci-lint" github.com/golangci/golangci-lint/v2)
  build golangci-lint "$v" "-s -w -X main.version=${v#v}" golangci-lint=github.com/golangci/golangci-lint/v2/cmd/golangci-lint
}

# promtool checks and unit-tests the chart's PrometheusRule (test/chart).
# remove_all_sd leaves Prometheus's service discovery plugins out: promtool
# rule tests need none of them, and their modules are most of the build.
promtool() {
  local v
  v=$(module_version "$root/hack/tools/promtool" github.com/prometheus/prometheus)
  # The module's v0.3XX.Y is Prometheus 3.XX.Y.
  local release=${v#v0.}
  release=3.${release:1}
  GOFLAGS="$GOFLAGS -tags=remove_all_sd" build promtool "$v" \
    "-s -w -X github.com/prometheus/common/version.Version=$release" \
    promtool=github.com/prometheus/prometheus/cmd/promtool
}

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(etcd kube helm golangci-lint promtool)
for t in "${tools[@]}"; do
  case $t in
    kube) kube ;;
    etcd) etcd ;;
    helm) helm ;;
    golangci-lint) golangci_lint ;;
    promtool) promtool ;;
    node) node ;;
    *) log "unknown tool $t (want: kube etcd helm golangci-lint promtool node)"; exit 2 ;;
  esac
done
