#!/usr/bin/env bash
# make demo: starts the local control plane with apply-hygiene installed
# (the chart in url mode, the server as a local process) and plays the
# scenarios of the source documents with real kubectl, twice: in a
# namespace apply-hygiene ignores (label apply-hygiene.io/ignore), where
# kubectl behaves as it always has, and in one it reviews.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=$root/.cache/bin
data=test/e2e/seeds/testdata
ns=

bold=$(tput bold 2>/dev/null || true)
dim=$(tput dim 2>/dev/null || true)
reset=$(tput sgr0 2>/dev/null || true)

say() { printf '\n%s%s%s\n' "$bold" "$*" "$reset"; }
note() { printf '%s  %s%s\n' "$dim" "$*" "$reset"; }
# run prints a kubectl command line, then runs it and indents its output;
# a failing command is part of the story, not the end of the demo.
# The output of the last run is kept in $last.
run() {
  printf '%s$ kubectl %s%s\n' "$bold" "$*" "$reset"
  last=$("$bin/kubectl" "$@" -n "$ns" 2>&1 || true)
  [[ -z $last ]] || printf '%s\n' "$last" | sed 's/^/    /'
}
quietly() { "$bin/kubectl" "$@" -n "$ns" >/dev/null 2>&1 || true; }
wait_revisions() {
  local selector=$1 n=$2
  for _ in $(seq 1 150); do
    [[ $("$bin/kubectl" get controllerrevisions,replicasets -n "$ns" -l "$selector" -o name | wc -l) -ge $n ]] && return 0
    sleep 0.2
  done
  echo "timed out waiting for $n revisions of $selector" >&2
  return 1
}
fresh_namespace() {
  ns=$1
  "$bin/kubectl" delete namespace "$ns" --ignore-not-found --wait=true --timeout=60s >/dev/null
  "$bin/kubectl" create namespace "$ns" >/dev/null
  if [[ ${2:-} == ignored ]]; then
    "$bin/kubectl" label namespace "$ns" apply-hygiene.io/ignore=true >/dev/null
  fi
}

seed004() {
  say "Seed 004: an env var removed from the manifest, then rollout undo"
  run apply -f $data/seed004-v1.yaml
  wait_revisions app=my-wonderhoy-app 1
  note "v2 drops TO_BE_DELETED and ships a broken image"
  run apply -f $data/seed004-v2.yaml
  wait_revisions app=my-wonderhoy-app 2
  note "the image is broken: roll back to revision 1"
  run rollout undo statefulset/my-wonderhoy-app --to-revision=1
  note "what last-applied says now:"
  run apply view-last-applied statefulset/my-wonderhoy-app
  note "v3 fixes the image, still without TO_BE_DELETED"
  run apply -f $data/seed004-v3.yaml
  run get statefulset/my-wonderhoy-app -o 'jsonpath={.spec.template.spec.containers[0].env}{"\n"}'
}

seed003() {
  say "Seed 003: kubectl rollout restart, then apply"
  run apply -f $data/seed003-v1.yaml
  run rollout restart deployment/nginx-deployment
  run apply -f $data/seed003-v2.yaml
  restart_apply=$last
  run get deployment/nginx-deployment -o 'jsonpath={.spec.template.metadata.annotations}{"\n"}'
}

seed002() {
  say "Seed 002: kubectl scale (the manifest has no replicas), kubectl set image, then apply"
  quietly delete deployment/nginx-deployment
  run apply -f $data/seed002-simple-deployment.yaml
  run scale deployment/nginx-deployment --replicas=2
  run set image deployment/nginx-deployment nginx=nginx:1.99
  run apply -f $data/seed002-update-deployment.yaml
  run get deployment/nginx-deployment -o 'jsonpath=replicas={.spec.replicas} minReadySeconds={.spec.minReadySeconds} image={.spec.template.spec.containers[0].image}{"\n"}'

  say "Seed 002: a StatefulSet switched to updateStrategy OnDelete"
  run apply -f $data/seed002-statefulset.yaml
  run apply -f $data/seed002-statefulset-ondelete.yaml
  run get statefulset/web -o 'jsonpath={.spec.updateStrategy}{"\n"}'
}

say "Starting the local control plane and apply-hygiene (the first run builds them: several minutes)"
eval "$("$bin/cluster" up --webhook)"
"$bin/kubectl" version 2>/dev/null | sed 's/^/    /'

say "═══ Part 1: without apply-hygiene (namespace labelled apply-hygiene.io/ignore) ═══"
fresh_namespace demo-without ignored
seed004
note "TO_BE_DELETED is still there: undo left last-applied at v2, and apply deletes only what last-applied had"
seed003
note "restartedAt stays forever: last-applied never had it"
seed002
note "the set image was silently reverted by the apply; the OnDelete apply was rejected by validation"

say "═══ Part 2: with apply-hygiene ═══"
fresh_namespace demo-with
seed004
note "the undo repaired last-applied (its warning says so, after kubectl's own 'will not update' warning), so v3's apply deleted TO_BE_DELETED"
seed003
note "the apply warned about restartedAt, with the command that removes it:"
cmd=$(printf '%s\n' "$restart_apply" | sed -n "s/.*Remove it with: //p" | head -1)
if [[ -n $cmd ]]; then
  printf '%s$ %s%s\n' "$bold" "$cmd" "$reset"
  PATH=$bin:$PATH sh -c "$cmd" 2>&1 | sed 's/^/    /' || true
  run get deployment/nginx-deployment -o 'jsonpath={.spec.template.metadata.annotations}{"\n"}'
fi
seed002
note "scale of a field the manifest does not own passed; set image of one it owns was denied before it could be reverted"

say "Done. The control plane and apply-hygiene keep running so you can look around:"
echo "    export KUBECONFIG=$KUBECONFIG"
echo "    .cache/bin/kubectl get all -n demo-with"
echo "Stop them with: make dev-down"
# A machine that can run a node (root, cgroups) can show the same as users
# run it: the image of make image, Pods on a kubelet, helm install.
if [[ $(id -u) == 0 && ( -d /sys/fs/cgroup/memory || -f /sys/fs/cgroup/cgroup.controllers ) ]]; then
  echo
  say "This machine can run a real node too: see the same as users run it (the image from make image, Pods on a kubelet, helm install):"
  echo "    make dev-down && make cluster-up NODE=1    # then helm install as docs/install.md says"
  echo "    make test-node                              # the node test: helm install, the seeds through the Service, helm test"
fi
