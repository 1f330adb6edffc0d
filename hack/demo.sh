#!/usr/bin/env bash
# make demo: starts the local control plane and plays the scenarios of the
# source documents with real kubectl, narrating what a user sees.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=$root/.cache/bin
data=test/e2e/seeds/testdata
ns=apply-hygiene-demo

bold=$(tput bold 2>/dev/null || true)
dim=$(tput dim 2>/dev/null || true)
reset=$(tput sgr0 2>/dev/null || true)

say() { printf '\n%s%s%s\n' "$bold" "$*" "$reset"; }
note() { printf '%s  %s%s\n' "$dim" "$*" "$reset"; }
# run prints a kubectl command line, then runs it and indents its output;
# a failing command is part of the story, not the end of the demo.
run() {
  printf '%s$ kubectl %s%s\n' "$bold" "$*" "$reset"
  "$bin/kubectl" "$@" -n "$ns" 2>&1 | sed 's/^/    /' || true
}
wait_revisions() {
  local selector=$1 n=$2
  for _ in $(seq 1 100); do
    [[ $("$bin/kubectl" get controllerrevisions -n "$ns" -l "$selector" -o name | wc -l) -ge $n ]] && return 0
    sleep 0.2
  done
  echo "timed out waiting for $n controller revisions" >&2
  return 1
}

say "Starting the local control plane (etcd, kube-apiserver, kube-controller-manager)"
eval "$("$bin/cluster" up)"
"$bin/kubectl" version 2>/dev/null | sed 's/^/    /'
"$bin/kubectl" delete namespace "$ns" --ignore-not-found --wait=false >/dev/null
for _ in $(seq 1 150); do
  "$bin/kubectl" get namespace "$ns" >/dev/null 2>&1 || break
  sleep 0.2
done
"$bin/kubectl" create namespace "$ns" >/dev/null

say "Seed 004: an env var removed from the manifest survives apply after a rollout undo"
run apply -f $data/seed004-v1.yaml
wait_revisions app=my-wonderhoy-app 1
note "v2 drops TO_BE_DELETED and ships a broken image"
run apply -f $data/seed004-v2.yaml
wait_revisions app=my-wonderhoy-app 2
note "the image is broken: roll back to revision 1"
run rollout undo statefulset/my-wonderhoy-app --to-revision=1
note "last-applied still describes v2 (no TO_BE_DELETED): it is stale now"
run apply view-last-applied statefulset/my-wonderhoy-app
note "v3 fixes the image, still without TO_BE_DELETED"
run apply -f $data/seed004-v3.yaml
run get statefulset/my-wonderhoy-app -o 'jsonpath={.spec.template.spec.containers[0].env}{"\n"}'
note "TO_BE_DELETED is still there: apply deletes only what last-applied had"

say "Seed 003: kubectl rollout restart's annotation is never removed by apply"
run apply -f $data/seed003-v1.yaml
run rollout restart deployment/nginx-deployment
run apply -f $data/seed003-v2.yaml
run get deployment/nginx-deployment -o 'jsonpath={.spec.template.metadata.annotations}{"\n"}'
note "restartedAt stays forever: last-applied never had it"

say "Seed 002: kubectl scale, then apply of a manifest without replicas"
run delete deployment/nginx-deployment
run apply -f $data/seed002-simple-deployment.yaml
run scale deployment/nginx-deployment --replicas=2
run apply -f $data/seed002-update-deployment.yaml
run get deployment/nginx-deployment -o 'jsonpath=replicas={.spec.replicas} minReadySeconds={.spec.minReadySeconds} image={.spec.template.spec.containers[0].image}{"\n"}'
note "replicas (set by scale) is kept, minReadySeconds (removed from the manifest) is cleared"

say "Seed 002: a StatefulSet switched to updateStrategy OnDelete keeps the defaulted rollingUpdate"
run apply -f $data/seed002-statefulset.yaml
run get statefulset/web -o 'jsonpath={.spec.updateStrategy}{"\n"}'
run apply -f $data/seed002-statefulset-ondelete.yaml
note "the server defaulted rollingUpdate; apply never deletes it, so validation rejects the change"

say "Seeds 000/001/002: how lists merge"
run apply -f $data/containers-last-applied.yaml
run patch deployment/merge-example -p '{"spec":{"template":{"spec":{"containers":[{"name":"nginx-helper-b","args":["run"]},{"name":"nginx-helper-d","image":"helper:1.3"}]}}}}'
run apply -f $data/containers-manifest.yaml
run get deployment/merge-example -o 'jsonpath={range .spec.template.spec.containers[*]}{.name} {.image} {.args}{"\n"}{end}'
note "helper-a deleted (it was in last-applied), helper-b keeps its args, helper-c added, helper-d kept"

say "Done. The control plane keeps running so you can look around:"
echo "    export KUBECONFIG=$KUBECONFIG"
echo "    .cache/bin/kubectl get all -n $ns"
echo "Stop it with: make cluster-down"
