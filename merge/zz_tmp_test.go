package merge

import (
	"encoding/json"
	"os"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

func loadTmp(b *testing.B) *unstructured.Unstructured {
	raw, err := os.ReadFile("../webhook/testdata/bench/typical-edit.json")
	if err != nil {
		b.Fatal(err)
	}
	var r admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &r); err != nil {
		b.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(r.Request.Object.Raw); err != nil {
		b.Fatal(err)
	}
	u.Object = withoutManagedFields(u.Object)
	return u
}

func BenchmarkTmpConvert(b *testing.B) {
	a := NewAnalyzer()
	u := loadTmp(b)
	tv, err := a.typed.ObjectToTyped(u, typed.AllowDuplicates)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("validated", func(b *testing.B) {
		for b.Loop() {
			tv, _ := a.typed.ObjectToTyped(u, typed.AllowDuplicates)
			_, _ = tv.ToFieldSet()
		}
	})
	b.Run("unvalidated", func(b *testing.B) {
		for b.Loop() {
			tv := typed.AsTypedUnvalidated(value.NewValueInterface(u.Object), tv.Schema(), tv.TypeRef())
			_, _ = tv.ToFieldSet()
		}
	})
	b.Run("fieldset-only", func(b *testing.B) {
		for b.Loop() {
			_, _ = tv.ToFieldSet()
		}
	})
}
