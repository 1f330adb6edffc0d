package merge

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParseLastApplied(t *testing.T) {
	obj := func(annotation string, set bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web"}}}
		if set {
			u.SetAnnotations(map[string]string{LastAppliedAnnotation: annotation})
		}
		return u
	}
	tests := map[string]struct {
		obj     *unstructured.Unstructured
		wantErr error
		wantMsg string
	}{
		"a valid annotation parses":          {obj: obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`, true)},
		"another version of the group is ok": {obj: obj(`{"apiVersion":"apps/v1beta2","kind":"Deployment","metadata":{"name":"web"}}`, true)},
		"no annotation is missing":           {obj: obj("", false), wantErr: ErrMissingLastApplied},
		"an empty annotation is missing":     {obj: obj("", true), wantErr: ErrMissingLastApplied},
		// kubectl reads "" and null as no previous manifest, but fails on
		// anything else that is not a JSON object.
		"a blank annotation is invalid": {obj: obj(" \n", true), wantErr: ErrInvalidLastApplied},
		"JSON null is missing":          {obj: obj("null", true), wantErr: ErrMissingLastApplied},
		// kubectl uses the annotation as it is: a Deployment applied as
		// extensions/v1beta1 before apps/v1 existed keeps that last-applied.
		"the group a kind moved from is ok": {obj: obj(`{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"web"}}`, true)},
		"text that is not JSON is invalid": {
			obj: obj("apiVersion: apps/v1", true), wantErr: ErrInvalidLastApplied, wantMsg: "decoding last-applied",
		},
		"a JSON list is invalid": {obj: obj("[]", true), wantErr: ErrInvalidLastApplied, wantMsg: "decoding last-applied"},
		"another kind is invalid": {
			obj: obj(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"}}`, true), wantErr: ErrInvalidLastApplied,
			wantMsg: "it is for StatefulSet in apps/v1, not Deployment in apps/v1",
		},
		"another group is invalid": {
			obj: obj(`{"apiVersion":"example.com/v1","kind":"Deployment","metadata":{"name":"web"}}`, true), wantErr: ErrInvalidLastApplied,
		},
		"another name is invalid": {
			obj: obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api"}}`, true), wantErr: ErrInvalidLastApplied,
			wantMsg: `it names "api", not "web"`,
		},
		"metadata that is no object is invalid": {
			obj: obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":"web"}`, true), wantErr: ErrInvalidLastApplied,
		},
		// kubectl never reads the annotation's apiVersion, kind or name
		// (patcher.go, CreateThreeWayMergePatch): only those it has can
		// name another object.
		"no apiVersion and no kind parses":  {obj: obj(`{"metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2}}`, true)},
		"no name parses":                    {obj: obj(`{"spec":{"replicas":2}}`, true)},
		"an empty object parses":            {obj: obj(`{}`, true)},
		"a kind without apiVersion parses":  {obj: obj(`{"kind":"Deployment","metadata":{"name":"web"}}`, true)},
		"an apiVersion without kind parses": {obj: obj(`{"apiVersion":"apps/v1","metadata":{"name":"web"}}`, true)},
		"another kind without apiVersion is invalid": {
			obj: obj(`{"kind":"Service","metadata":{"name":"web"}}`, true), wantErr: ErrInvalidLastApplied,
			wantMsg: "it is for Service, not Deployment in apps/v1",
		},
		"another name without kind is invalid": {
			obj: obj(`{"metadata":{"name":"api"}}`, true), wantErr: ErrInvalidLastApplied, wantMsg: `it names "api", not "web"`,
		},
		"a JSON string is invalid": {obj: obj(`"web"`, true), wantErr: ErrInvalidLastApplied, wantMsg: "decoding last-applied"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseLastApplied(tc.obj)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("ParseLastApplied error = %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
		})
	}
}

func TestAnalyzeApplyInvalidLastApplied(t *testing.T) {
	f := loadFixture(t, "seed000-primitive-clear")
	live := f.live.DeepCopy()
	live.SetAnnotations(map[string]string{LastAppliedAnnotation: "{not json"})
	res, an, err := NewAnalyzer().predictApply(live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if res != nil || an.LastApplied.Status != LastAppliedInvalid || an.LastApplied.Error == "" {
		t.Errorf("result %v, last-applied %+v; want no result and an invalid status", res, an.LastApplied)
	}
}

// TestAnalyzeApplyOfUnusualLastApplied applies seed001-delete-fields'
// manifest, which drops replicas and minReadySeconds, over live with each
// annotation kubectl may meet, and says what kubectl does with it.
func TestAnalyzeApplyOfUnusualLastApplied(t *testing.T) {
	tests := map[string]struct {
		annotation string
		status     LastAppliedStatus
		fault      LastAppliedFault
		// deleted is set when the apply deletes replicas (kubectl computes
		// its deletions from the annotation).
		deleted bool
	}{
		"a manifest without apiVersion or kind is used as it is": {
			annotation: `{"metadata":{"name":"nginx-deployment","namespace":"default"},"spec":{"replicas":2,"minReadySeconds":3}}`,
			status:     LastAppliedPresent, deleted: true,
		},
		"a manifest without metadata is used as it is": {
			annotation: `{"spec":{"replicas":2}}`, status: LastAppliedPresent, deleted: true,
		},
		"an empty object deletes nothing":    {annotation: `{}`, status: LastAppliedPresent},
		"JSON null is no manifest":           {annotation: `null`, status: LastAppliedMissing},
		"an empty annotation is no manifest": {annotation: ``, status: LastAppliedMissing},
		"a JSON list makes kubectl fail":     {annotation: `[]`, status: LastAppliedInvalid, fault: FaultNotAnObject},
		"a JSON string makes kubectl fail":   {annotation: `"web"`, status: LastAppliedInvalid, fault: FaultNotAnObject},
		"text that is not JSON makes kubectl fail": {
			annotation: `{not json`, status: LastAppliedInvalid, fault: FaultNotAnObject,
		},
		"another kind's manifest is another object's": {
			annotation: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"nginx-deployment"}}`,
			status:     LastAppliedInvalid, fault: FaultAnotherObject,
		},
		"another name's manifest is another object's": {
			annotation: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2}}`,
			status:     LastAppliedInvalid, fault: FaultAnotherObject,
		},
		"metadata that is not an object": {
			annotation: `{"metadata":"web","spec":{"replicas":2}}`, status: LastAppliedInvalid, fault: FaultMetadataNotAnObject,
		},
	}
	f := loadFixture(t, "seed001-delete-fields")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := f.live.DeepCopy()
			live.SetAnnotations(map[string]string{LastAppliedAnnotation: tc.annotation})
			res, an, err := NewAnalyzer().predictApply(live, f.modified)
			if err != nil {
				t.Fatal(err)
			}
			got := struct {
				Status  LastAppliedStatus
				Fault   LastAppliedFault
				Deleted bool
			}{Status: an.LastApplied.Status, Fault: an.LastApplied.Fault}
			if res != nil {
				_, kept, _ := unstructured.NestedFieldNoCopy(res.Result.Object, "spec", "replicas")
				got.Deleted = !kept
			}
			want := struct {
				Status  LastAppliedStatus
				Fault   LastAppliedFault
				Deleted bool
			}{tc.status, tc.fault, tc.deleted}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("last-applied (-want +got):\n%s", diff)
			}
			if (res == nil) != (tc.status == LastAppliedInvalid) {
				t.Errorf("result %v with status %q: want one unless the annotation is invalid", res != nil, an.LastApplied.Status)
			}
		})
	}
}

func TestAnalyzeApplyTooLarge(t *testing.T) {
	f := loadFixture(t, "seed000-primitive-clear")
	manifest := f.modified.DeepCopy()
	manifest.SetAnnotations(map[string]string{"example.com/blob": strings.Repeat("x", TooLargeThreshold/2+1)})
	_, an, err := NewAnalyzer().predictApply(f.live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !an.LastAppliedTooLarge || an.AnnotationsBytes <= TooLargeThreshold {
		t.Errorf("too large = %v with %d bytes, want true above %d", an.LastAppliedTooLarge, an.AnnotationsBytes, TooLargeThreshold)
	}
}

func TestSecretValuesAreRedacted(t *testing.T) {
	secret := func(data map[string]any, la bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "s", "namespace": "default"}, "data": data}}
		if la {
			setLastApplied(t, u, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
				"metadata": map[string]any{"name": "s", "namespace": "default"}, "data": map[string]any{"a": "YQ=="}}})
		}
		return u
	}
	live := secret(map[string]any{"a": "c2VjcmV0", "b": "aGlkZGVu"}, true)
	withOwner(t, live, "kubectl-edit", `{"f:data":{"f:a":{},"f:b":{}}}`)
	manifest := secret(map[string]any{"a": "YQ=="}, false)
	_, an, err := NewAnalyzer().predictApply(live, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Reverts) != 1 || len(an.Orphans) != 1 {
		t.Fatalf("reverts %v, orphans %v; want data.a and data.b", paths(an.Reverts), paths(an.Orphans))
	}
	for _, f := range append(an.Reverts, an.Orphans...) {
		for _, v := range []any{f.Live, f.Result, f.LastApplied, f.Manifest} {
			if v != nil && v != Redacted {
				t.Errorf("%s shows a secret value %v", f.Path, v)
			}
		}
	}
}

func TestLongValuesAreTruncated(t *testing.T) {
	long := strings.Repeat("é", 200)
	got := truncate(map[string]any{"a": []any{long}}, 11).(map[string]any)["a"].([]any)[0]
	if got != strings.Repeat("é", 5)+"…" {
		t.Errorf("truncate = %q", got)
	}
}

// A Deployment applied as extensions/v1beta1 before apps/v1 existed keeps
// that last-applied: the analysis is the same as with apps/v1.
func TestAnalyzeApplyWithLastAppliedOfMovedGroup(t *testing.T) {
	f := loadFixture(t, "seed001-set-image-reverted")
	_, want, err := NewAnalyzer().predictApply(f.live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	live := f.live.DeepCopy()
	original := f.original.DeepCopy()
	original.SetAPIVersion("extensions/v1beta1")
	setLastApplied(t, live, original)
	_, got, err := NewAnalyzer().predictApply(live, f.modified)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastApplied.Status != LastAppliedPresent {
		t.Fatalf("last-applied %+v, want present", got.LastApplied)
	}
	if diff := cmp.Diff(paths(want.Reverts), paths(got.Reverts)); diff != "" || len(got.Reverts) == 0 {
		t.Errorf("reverts (-apps/v1 +extensions/v1beta1):\n%s", diff)
	}
}

// A write replaces last-applied when it leaves another value, or takes it
// away, or adds one; an empty annotation is one as well.
func TestLastAppliedReplaced(t *testing.T) {
	with := func(annotations map[string]string) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		obj.SetAnnotations(annotations)
		return obj
	}
	tests := map[string]struct {
		old, new map[string]string
		want     bool
	}{
		"left as it was":       {old: map[string]string{LastAppliedAnnotation: "{}"}, new: map[string]string{LastAppliedAnnotation: "{}", "team": "a"}},
		"neither has one":      {old: map[string]string{"team": "a"}, new: nil},
		"rewritten":            {old: map[string]string{LastAppliedAnnotation: "{}"}, new: map[string]string{LastAppliedAnnotation: "{}\n"}, want: true},
		"removed":              {old: map[string]string{LastAppliedAnnotation: "{}"}, new: nil, want: true},
		"added":                {old: nil, new: map[string]string{LastAppliedAnnotation: "{}"}, want: true},
		"emptied, not removed": {old: map[string]string{LastAppliedAnnotation: "x"}, new: map[string]string{LastAppliedAnnotation: ""}, want: true},
		"empty one taken away": {old: map[string]string{LastAppliedAnnotation: ""}, new: nil, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := LastAppliedReplaced(with(tc.old), with(tc.new)); got != tc.want {
				t.Errorf("LastAppliedReplaced = %v, want %v", got, tc.want)
			}
		})
	}
}
