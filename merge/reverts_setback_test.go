package merge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A write under kubectl apply's field manager that leaves last-applied as
// it was is an apply of an unchanged manifest only by the name it sends:
// it reverts a field only where it ends with last-applied's value (or
// removes a field last-applied lacks). Soak seed 271126, sequence 172:
// after an undo left last-applied stale, kubectl set image
// --field-manager=kubectl-client-side-apply was told it "sets … image back
// to" kubectl edit's image, and a mesh injector's stamp back to the one
// kubectl edit --save-config recorded, neither of which it set.
func TestAnalyzeClientSideApplyOfAnUnchangedManifestSetsBackOnlyItsValues(t *testing.T) {
	const dir = "daemonset-set-image-as-applier"
	const image = "spec.template.spec.containers[name=node-exporter].image"
	tests := map[string]struct {
		// image, when set, is the result's node-exporter image.
		image string
		want  []string
	}{
		"kubectl set image of a third image under kubectl apply's name sets nothing back": {},
		"an apply that puts last-applied's image back reverts the image, not the injector's stamp": {
			image: "registry.example/edit:11",
			want:  []string{image},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result := readObject(t, dir, "result.yaml")
			if tc.image != "" {
				containers, _, _ := unstructured.NestedSlice(result.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = tc.image
				mustSet(t, result, containers, "spec", "template", "spec", "containers")
			}
			an, err := NewAnalyzer().AnalyzeClientSideApply(readObject(t, dir, "live.yaml"), result)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(an.Reverts)); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
		})
	}
}

// setBack compares the write's value with last-applied's as the API
// server stores it: inside an atomic value the server adds its defaults (a
// fieldRef's apiVersion), and an apply that puts a person's fieldRef back
// still sets it back.
func TestSetBack(t *testing.T) {
	const (
		fieldRef = "spec.template.spec.containers[name=app].env[name=IP].valueFrom.fieldRef"
		image    = "spec.template.spec.containers[name=app].image"
		label    = "metadata.labels.team"
	)
	object := func(image string, fieldRef map[string]any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": map[string]any{"name": "app"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "app", "image": image, "env": []any{map[string]any{"name": "IP", "valueFrom": map[string]any{"fieldRef": fieldRef}}}}}}}}}
	}
	manifest := object("app:1", map[string]any{"fieldPath": "status.podIP"})
	untagged := object("app", map[string]any{"fieldPath": "status.podIP"})
	tests := map[string]struct {
		manifest map[string]any
		result   map[string]any
		want     []string
	}{
		"the write ends with last-applied's values, the fieldRef with the server's apiVersion": {
			result: object("app:1", map[string]any{"apiVersion": "v1", "fieldPath": "status.podIP"}),
			want:   []string{fieldRef, image, label},
		},
		"the write ends with other values": {
			result: object("app:2", map[string]any{"apiVersion": "v1", "fieldPath": "status.hostIP"}),
			want:   []string{label},
		},
		// Kyverno's verifyImages (mutateDigest), and other digest
		// pinners, append the digest after the apply's patch set the
		// image: the apply did set last-applied's image back (found by an
		// adversarial review: a miss behind every digest pinner).
		"a digest pinner appended the digest to last-applied's image": {
			result: object("app:1@sha256:"+strings.Repeat("0a", 32), map[string]any{"apiVersion": "v1", "fieldPath": "status.podIP"}),
			want:   []string{fieldRef, image, label},
		},
		"a digest of another image, or no digest at all, is no pin": {
			result: object("app:2@sha256:"+strings.Repeat("0a", 32), map[string]any{"apiVersion": "v1", "fieldPath": "status.podIP"}),
			want:   []string{fieldRef, label},
		},
		// Kyverno's default configuration (enableDefaultRegistryMutation,
		// defaultRegistry docker.io) also writes the registry, and
		// :latest where the image has no tag.
		"a digest pinner wrote the image's registry and the digest": {
			result: object("docker.io/library/app:1@sha256:"+strings.Repeat("0a", 32), map[string]any{"apiVersion": "v1", "fieldPath": "status.podIP"}),
			want:   []string{fieldRef, image, label},
		},
		"a digest pinner wrote the registry of another image": {
			result: object("ghcr.io/app:1@sha256:"+strings.Repeat("0a", 32), map[string]any{"apiVersion": "v1", "fieldPath": "status.podIP"}),
			want:   []string{fieldRef, label},
		},
		"an untagged image pinned as :latest with its registry": {
			manifest: untagged,
			result:   object("docker.io/library/app:latest@sha256:"+strings.Repeat("0a", 32), map[string]any{"apiVersion": "v1", "fieldPath": "status.podIP"}),
			want:     []string{fieldRef, image, label},
		},
		"a digest that is not sha256 hex is no pin": {
			result: object("app:1@sha256:xyz", map[string]any{"apiVersion": "v1", "fieldPath": "status.podIP"}),
			want:   []string{fieldRef, label},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// The label is a removal: last-applied lacks it.
			reverts := []FieldFact{{Path: mustPath(t, fieldRef)}, {Path: mustPath(t, image)}, {Path: mustPath(t, label)}}
			m := manifest
			if tc.manifest != nil {
				m = tc.manifest
			}
			if diff := cmp.Diff(tc.want, paths(setBack(reverts, "DaemonSet", tc.result, m))); diff != "" {
				t.Errorf("reverts set back (-want +got):\n%s", diff)
			}
		})
	}
}
