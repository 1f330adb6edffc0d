#!/bin/sh
# helm test of apply-hygiene (templates/tests/pod.yaml runs it in a pod;
# test/chart runs it against a local control plane). A server-side dry-run
# kubectl set image on a Deployment whose last-applied owns the image is an
# imperative edit: the webhook must answer it, with a warning (the default
# for service accounts) or a denial (policy.rules.imperative-edit.
# serviceAccountAction=deny). Nothing is stored: the write is a dry run.
# Needs TEST_NAMESPACE and TEST_DEPLOYMENT; kubectl from PATH or $KUBECTL.
# With POD_NAME, POD_NAMESPACE and TEST_CONFIGMAP, it first makes its own
# pod owned by the ConfigMap it runs from, so that helm uninstall, which
# deletes the ConfigMap, takes the pod too (it is kept after the test).
set -u
kubectl=${KUBECTL:-kubectl}
if [ -n "${POD_NAME:-}" ]; then
  if ! out=$({
    uid=$("$kubectl" --namespace "$POD_NAMESPACE" get configmap "$TEST_CONFIGMAP" -o 'jsonpath={.metadata.uid}') &&
      "$kubectl" --namespace "$POD_NAMESPACE" patch pod "$POD_NAME" --type=merge \
        -p "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"$TEST_CONFIGMAP\",\"uid\":\"$uid\"}]}}"
  } 2>&1); then
    echo "note: could not make configmap/$TEST_CONFIGMAP this pod's owner, so helm uninstall will leave pod/$POD_NAME: $out"
  fi
fi
out=$("$kubectl" --namespace "$TEST_NAMESPACE" set image "deployment/$TEST_DEPLOYMENT" \
  app=registry.k8s.io/pause:helm-test --dry-run=server 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -eq 0 ] && printf '%s\n' "$out" | grep -q '^Warning: \[imperative-edit\] '; then
  echo "PASS: the webhook warned about the imperative edit"
  exit 0
fi
if [ "$status" -ne 0 ] && printf '%s\n' "$out" | grep -q 'admission webhook "validate.apply-hygiene.io" denied the request: \[imperative-edit\] '; then
  echo "PASS: the webhook denied the imperative edit"
  exit 0
fi
echo "FAIL: kubectl exited $status without the webhook's [imperative-edit] warning or denial"
exit 1
