package merge

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// fromJSON is how DecodeManagedFields read fieldsV1 before fieldSetOf:
// the decoded map encoded again and read by fieldpath.
func fromJSON(fieldsV1 map[string]any) (string, error) {
	raw, err := json.Marshal(fieldsV1)
	if err != nil {
		return "", err
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return "", err
	}
	out, err := set.ToJSON()
	return string(out), err
}

func fromMap(fieldsV1 map[string]any) (string, error) {
	set, _, err := fieldSetOf(fieldsV1)
	if err != nil {
		return "", err
	}
	out, err := set.ToJSON()
	return string(out), err
}

// nodesJSON is a node set as JSON, "{}" for none.
func nodesJSON(t *testing.T, set *fieldpath.Set) string {
	t.Helper()
	if set == nil {
		set = &fieldpath.Set{}
	}
	out, err := set.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// fieldSetOf reads every managedFields entry of the captured reviews, and
// every odd fieldsV1, exactly as fieldpath's FromJSON does: the same set,
// the same error; and its nodes as nodes does.
func TestFieldSetOfEqualsFromJSON(t *testing.T) {
	tests := map[string]string{
		"empty":                                        `{}`,
		"a member and its children":                    `{"f:spec":{".":{},"f:replicas":{}}}`,
		"null child is a member":                       `{"f:metadata":{"f:labels":null}}`,
		"only a dot":                                   `{".":{}}`,
		"unknown path element type is dropped":         `{"x:what":{"f:a":{}},"f:b":{}}`,
		"a child with only unknown keys is a member":   `{"f:a":{"x:what":{}}}`,
		"keys, values and indexes":                     `{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:image":{}}},"f:ports":{"v:80":{}},"i:3":{}}}`,
		"two keys of one path element, the later wins": `{"f:c":{"k:{\"a\":1,\"b\":2}":{"f:x":{}},"k:{\"b\":2,\"a\":1}":{"f:y":{}}}}`,
		"a string value is an error":                   `{"f:a":"x"}`,
		"a list value is an error":                     `{"f:a":[]}`,
		"a key that is no path element":                `{"f:a":{"k:{":{}}}`,
		"a number value":                               `{"f:a":{"f:b":1}}`,
	}
	for _, p := range capturedPairs(t, "../webhook/testdata/reviews", "../webhook/testdata/bench", "../test/badinput/testdata") {
		for _, obj := range []map[string]any{p.old.Object, p.new.Object} {
			entries, err := ReadManagedFields(&unstructured.Unstructured{Object: obj})
			if err != nil {
				continue
			}
			for i, e := range entries {
				raw, err := json.Marshal(e.FieldsV1)
				if err != nil {
					t.Fatal(err)
				}
				tests[p.name+"/"+e.Manager+"/"+string(rune('0'+i))] = string(raw)
			}
		}
	}
	if len(tests) < 100 {
		t.Fatalf("only %d fieldsV1 to compare", len(tests))
	}
	for name, raw := range tests {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(raw), &m); err != nil {
				t.Fatal(err)
			}
			want, wantErr := fromJSON(m)
			got, gotErr := fromMap(m)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("field set (-FromJSON +fieldSetOf):\n%s", diff)
			}
			if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
				t.Errorf("error: FromJSON %v, fieldSetOf %v", wantErr, gotErr)
			}
			if gotErr != nil {
				return
			}
			_, gotNodes, _ := fieldSetOf(m)
			if diff := cmp.Diff(nodesJSON(t, nodes(m, nil, nil)), nodesJSON(t, gotNodes)); diff != "" {
				t.Errorf("nodes (-nodes +fieldSetOf):\n%s", diff)
			}
		})
	}
}
