#!/usr/bin/env bash
# testbin.sh — builds the real kube-apiserver and etcd the integration tests run through envtest,
# and fetches the real CRDs (OpenShift, OLM, Argo CD) they install. Everything lands in a cache
# outside the checkout, keyed by versions:
#
#   $BOOTSTRAP_TESTBIN_ROOT/k8s-<v>_etcd-<v>/{kube-apiserver,etcd,crds/,versions.txt}
#
# Idempotent: when the binaries and CRDs are present it does nothing. Only the Go module proxy is
# used (no prebuilt downloads). Builds use the shared module cache (lib.sh shared_modcache) and a
# private GOCACHE removed afterwards (a cold build is ~27 CPU-minutes and ~4.6 GB of caches); only
# the results are kept.
#
# Prints the directory on stdout (point KUBEBUILDER_ASSETS at it, or let the tests find it).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}   # k8s.io/kubernetes; staging modules map to v0.<minor>.<patch>
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}  # go.etcd.io/etcd/server/v3
OPENSHIFT_API=${OPENSHIFT_API:-v0.0.0-20260318185450-1f2fa3f09f4e}
OLM_API=${OLM_API:-v0.45.0}
ARGOCD=${ARGOCD:-v3.6.2}    # the Argo CD whose controllers scripts/argocd.sh builds (argocdtest.Version)
ROOT=${BOOTSTRAP_TESTBIN_ROOT:-/var/cache/bootstrap/testbin}
DIR="$ROOT/k8s-${K8S_VERSION#v}_etcd-${ETCD_VERSION#v}"
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=0

log() { echo "$(ci_at)testbin: $*" >&2; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# crds_versions is what crds/.complete records: CRDs of other versions are fetched again (seconds),
# the binaries are kept.
crds_versions() {
  printf 'github.com/openshift/api %s\ngithub.com/operator-framework/api %s\ngithub.com/argoproj/argo-cd/v3 %s\n' \
    "$OPENSHIFT_API" "$OLM_API" "$ARGOCD"
}
crds_complete() {
  [ -f "$DIR/crds/.complete" ] && [ "$(cat "$DIR/crds/.complete")" = "$(crds_versions)" ]
}
complete() {
  [ -x "$DIR/kube-apiserver" ] && [ -x "$DIR/etcd" ] && crds_complete
}

if complete; then echo "$DIR"; exit 0; fi

mkdir -p "$ROOT"
# One build at a time on a shared machine; a second caller waits and then finds the cache filled.
exec 9>"$ROOT/.lock"
if ! flock -n 9; then phase "another build holds $ROOT/.lock; waiting for it" flock 9; fi
if complete; then echo "$DIR"; exit 0; fi
if [ -x "$DIR/kube-apiserver" ] && [ -x "$DIR/etcd" ]; then
  log "fetching the CRDs again (the versions wanted changed) into $DIR/crds"
else
  log "building kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION once (about 8-25 minutes on 2 cores) into $DIR"
fi
mkdir -p "$DIR"

WORK=$(mktemp -d "$ROOT/.build.XXXXXX")
shared_modcache
export GOCACHE="$WORK/cache"
cleanup() {
  # Module cache files are read-only; make them writable before removing.
  chmod -R u+w "$WORK" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# download MODULE@VERSION -> prints the module's directory in the shared module cache.
download() {
  (cd "$WORK" && go mod download -json "$1") | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

# module_zip MODULE@VERSION -> prints the path of the module's zip in the shared module cache.
# Used for Argo CD: its go.mod needs Go 1.27, so the go command (GOTOOLCHAIN=local) downloads the
# zip but refuses to extract it; its CRD files are read from the zip instead.
module_zip() {
  { (cd "$WORK" && go mod download -json "$1") || true; } | sed -n 's/^\t"Zip": "\(.*\)",$/\1/p'
}

fetch_crds() {
  crds_complete && return 0
  local out="$DIR/crds.tmp" os olm argo
  rm -rf "$out"; mkdir -p "$out"
  os=$(download "github.com/openshift/api@$OPENSHIFT_API")
  olm=$(download "github.com/operator-framework/api@$OLM_API")
  argo=$(module_zip "github.com/argoproj/argo-cd/v3@$ARGOCD")
  [ -n "$os" ] && [ -n "$olm" ] && [ -n "$argo" ] || { log "go mod download of a CRD module failed"; exit 1; }
  # OpenShift: one file per CRD; where feature sets differ take the -Default variant.
  local f
  for f in \
    config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagetagmirrorsets.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_images.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_03_marketplace_01_operatorhubs.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml \
    machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml \
    machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools-Default.crd.yaml \
    route/v1/zz_generated.crd-manifests/routes.crd.yaml; do
    install -m 0644 "$os/$f" "$out/openshift_$(basename "$f")"
  done
  for f in catalogsources clusterserviceversions installplans operatorgroups subscriptions; do
    install -m 0644 "$olm/crds/operators.coreos.com_$f.yaml" "$out/olm_$f.yaml"
  done
  for f in application applicationset appproject; do
    unzip -p "$argo" "github.com/argoproj/argo-cd/v3@$ARGOCD/manifests/crds/$f-crd.yaml" >"$out/argocd_$f.yaml"
    [ -s "$out/argocd_$f.yaml" ] || { log "$f-crd.yaml not in $argo"; exit 1; }
  done
  crds_versions >"$out/.complete"
  rm -rf "$DIR/crds"; mv "$out" "$DIR/crds"
  log "CRDs in $DIR/crds"
}

build_etcd() {
  [ -x "$DIR/etcd" ] && return 0
  local m="$WORK/etcd"
  mkdir -p "$m"
  cat >"$m/main.go" <<'EOF'
// Command etcd is etcd's server entry point, built from the published module for tests.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
  (cd "$m" && go mod init bootstrap.test/testbin/etcd >/dev/null 2>&1 \
    && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2 && go mod tidy >&2 \
    && go build -trimpath -ldflags '-s -w' -o "$DIR/etcd.tmp" .)
  mv "$DIR/etcd.tmp" "$DIR/etcd"
  log "etcd built: $("$DIR/etcd" --version | head -1)"
}

build_apiserver() {
  [ -x "$DIR/kube-apiserver" ] && return 0
  local m="$WORK/apiserver" kdir
  mkdir -p "$m"
  kdir=$(download "k8s.io/kubernetes@$K8S_VERSION")
  [ -n "$kdir" ] || { log "go mod download k8s.io/kubernetes@$K8S_VERSION failed"; exit 1; }
  {
    echo "module bootstrap.test/testbin/apiserver"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//')"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    # k8s.io/kubernetes replaces each staging module with ./staging/src/k8s.io/X; outside its own
    # repository those are the published k8s.io/X modules at the matching v0 version.
    sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/src/.*#replace \1 => \1 '"$STAGING_VERSION"'#p' "$kdir/go.mod"
  } >"$m/go.mod"
  cat >"$m/tools.go" <<'EOF'
//go:build tools

// Package tools pins the kube-apiserver command for `go build`.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
EOF
  log "kube-apiserver wrapper: $(grep -c '^replace' "$m/go.mod") staging replaces -> $STAGING_VERSION"
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$m" && go mod tidy -e >&2 \
    && go build -trimpath -ldflags "$ld" -o "$DIR/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$DIR/kube-apiserver.tmp" "$DIR/kube-apiserver"
  log "kube-apiserver built: $("$DIR/kube-apiserver" --version)"
}

start=$(date +%s)
phase "fetching the CRDs (openshift/api, operator-framework/api, argo-cd)" fetch_crds
phase "building etcd $ETCD_VERSION" build_etcd
phase "building kube-apiserver $K8S_VERSION" build_apiserver
printf 'k8s.io/kubernetes %s\ngo.etcd.io/etcd/server/v3 %s\n' "$K8S_VERSION" "$ETCD_VERSION" >"$DIR/versions.txt"
log "done in $(( $(date +%s) - start ))s; $(du -sh "$DIR" | cut -f1) in $DIR (build caches removed)"
echo "$DIR"
