package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A key applied through stringData lives in data: it is no orphan, and an
// unchanged one is no drift (the reliability e2e caught the first).
func TestStringDataIsOwnedAsData(t *testing.T) {
	live := appliedCanary(t)
	manifest := mustObject(t, `
apiVersion: v1
kind: Secret
metadata:
  name: canary
  namespace: ns
stringData:
  password: password-2
  token: token-1
type: Opaque
`)
	_, an, err := NewAnalyzer().predictApply(live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FieldFact{}, an.Orphans); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
	lv, err := NewAnalyzer().AnalyzeLive(live)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FieldFact{}, lv.Drift); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
}

func mustObject(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// A key dropped from a manifest's stringData stays in data: kubectl's
// patch deletes stringData.<key>, which the stored Secret does not have.
// It is reported at the apply that leaves it, with its value redacted, in
// the CLI's prediction and in the webhook's view of the same apply.
func TestStringDataKeyDroppedFromManifestIsOrphaned(t *testing.T) {
	live := appliedCanary(t)
	withOwner(t, live, ClientSideApplyManager, `{"f:data":{".":{},"f:password":{},"f:token":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:type":{}}`)
	manifest := mustObject(t, `
apiVersion: v1
kind: Secret
metadata:
  name: canary
  namespace: ns
stringData:
  password: password-1
type: Opaque
`)
	res, an, err := NewAnalyzer().predictApply(live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldFact{{Path: mustPath(t, "data.token"), Live: Redacted, Result: Redacted,
		Owners:      []Owner{{Manager: ClientSideApplyManager, Operation: "Update", APIVersion: "v1", Time: fixtureTime}},
		RemovePatch: `[{"op":"remove","path":"/data/token"}]`, Pointer: "/data/token"}}
	if diff := cmp.Diff(want, an.Orphans, pathString); diff != "" {
		t.Errorf("orphans of the prediction (-want +got):\n%s", diff)
	}
	// The webhook sees the stored result: data.token is still there.
	result := live.DeepCopy()
	result.SetAnnotations(res.Result.GetAnnotations())
	webhook, err := NewAnalyzer().AnalyzeClientSideApply(live, result)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, webhook.Orphans, pathString); diff != "" {
		t.Errorf("orphans of the stored apply (-want +got):\n%s", diff)
	}
}

// appliedCanary is the Secret "canary" as stored after kubectl apply of a
// manifest with stringData password and token.
func appliedCanary(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	la := `{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"canary","namespace":"ns"},"stringData":{"password":"password-1","token":"token-1"},"type":"Opaque"}`
	return mustObject(t, `
apiVersion: v1
kind: Secret
metadata:
  name: canary
  namespace: ns
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '`+la+`'
data:
  password: cGFzc3dvcmQtMQ==
  token: dG9rZW4tMQ==
type: Opaque
`)
}

// The API server decodes a Secret's data into bytes and stores them
// encoded again: a manifest's base64 wrapped at 76 characters, as the
// base64 command prints it, is stored on one line, and padding bits that
// are not zero become zero. The same bytes spelled otherwise are no drift,
// and an edit that puts them back is no imperative change; other bytes
// still are (fixture secret-wrapped-base64).
func TestSecretDataComparesByBytes(t *testing.T) {
	tests := map[string]struct {
		// old and new are the stored data.flag before and after the
		// write; new "" analyzes the stored object at old.
		old, new string
		want     []string
	}{
		"the stored Secret has the manifest's bytes":        {old: "YQ=="},
		"other bytes are drift":                             {old: "Yg==", want: []string{"data.flag"}},
		"an edit back to last-applied's bytes changes none": {old: "Yg==", new: "YQ=="},
		"an edit to other bytes is an imperative change":    {old: "YQ==", new: "Yw==", want: []string{"data.flag"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "secret-wrapped-base64")
			old := f.live.DeepCopy()
			if err := unstructured.SetNestedField(old.Object, tc.old, "data", "flag"); err != nil {
				t.Fatal(err)
			}
			var (
				an  *Analysis
				err error
			)
			if tc.new == "" {
				an, err = NewAnalyzer().AnalyzeLive(old)
			} else {
				written := old.DeepCopy()
				if err := unstructured.SetNestedField(written.Object, tc.new, "data", "flag"); err != nil {
					t.Fatal(err)
				}
				withOwner(t, written, "kubectl-edit", `{"f:data":{"f:flag":{}}}`)
				an, err = NewAnalyzer().AnalyzeUpdate(old, written)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := append(paths(an.Drift), paths(an.ImperativeChanges)...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("drift and imperative changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigMapBinaryDataComparesByBytes(t *testing.T) {
	tests := map[string]struct {
		// old and new are the stored binaryData.b before and after the
		// write; operation "live" analyzes the stored object at old.
		old, new  string
		operation string
		want      []string
	}{
		"the stored ConfigMap has the manifest's bytes":         {old: "YWJjZGVm", operation: "live"},
		"other bytes are drift":                                 {old: "Z2hp", operation: "live", want: []string{"binaryData.b"}},
		"an edit back to last-applied's bytes changes none":     {old: "Z2hp", new: "YWJjZGVm", operation: "update"},
		"an edit to other bytes is an imperative change":        {old: "YWJjZGVm", new: "Z2hp", operation: "update", want: []string{"binaryData.b"}},
		"an apply that keeps the manifest's bytes reverts none": {old: "YWJjZGVm", new: "YWJjZGVm", operation: "apply"},
		"an apply that sets edited bytes back reverts them":     {old: "Z2hp", new: "YWJjZGVm", operation: "apply", want: []string{"binaryData.b"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, "configmap-wrapped-base64")
			old := f.live.DeepCopy()
			if err := unstructured.SetNestedField(old.Object, tc.old, "binaryData", "b"); err != nil {
				t.Fatal(err)
			}
			written := old.DeepCopy()
			if err := unstructured.SetNestedField(written.Object, tc.new, "binaryData", "b"); err != nil {
				t.Fatal(err)
			}
			var (
				an  *Analysis
				err error
			)
			switch tc.operation {
			case "live":
				an, err = NewAnalyzer().AnalyzeLive(old)
			case "update":
				withOwner(t, written, "kubectl-edit", `{"f:binaryData":{"f:b":{}}}`)
				an, err = NewAnalyzer().AnalyzeUpdate(old, written)
			case "apply":
				withOwner(t, old, "kubectl-edit", `{"f:binaryData":{"f:b":{}}}`)
				an, err = NewAnalyzer().AnalyzeClientSideApply(old, written)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := append(append(paths(an.Drift), paths(an.ImperativeChanges)...), paths(an.Reverts)...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("drift, imperative changes and reverts (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzRespellable holds restoredData's shortcut to storedBase64: base64
// that respellable passes over is stored as written.
func FuzzRespellable(f *testing.F) {
	for _, s := range []string{"", "YQ==", "YR==", "YWI=", "YWJ=", "YWJj", "YWJj\nZGVm", "YWJj\r\nZGVm", "=", "==", "Y===", "not base64"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !respellable(s) && storedBase64(s) != s {
			t.Errorf("respellable(%q) = false, but it is stored as %q", s, storedBase64(s))
		}
	})
}
