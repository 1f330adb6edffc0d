package merge

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ReadManagedFields reads what the server stores and names what is wrong
// in what it never would store.
func TestReadManagedFields(t *testing.T) {
	tests := map[string]struct {
		metadata string
		want     []ManagedFieldsEntry
		wantErr  string
	}{
		"absent": {metadata: `{"name":"web"}`},
		"null":   {metadata: `{"managedFields":null}`},
		"entries": {
			metadata: `{"managedFields":[
			  {"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"apps/v1","time":"2026-11-22T04:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}},
			  {"manager":"kubectl","operation":"Update","subresource":"scale","time":"2026-11-22T05:00:00+01:00"}]}`,
			want: []ManagedFieldsEntry{
				{Owner: Owner{Manager: "kubectl-client-side-apply", Operation: "Update", APIVersion: "apps/v1", Time: time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)},
					FieldsV1: map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}},
				{Owner: Owner{Manager: "kubectl", Operation: "Update", Subresource: "scale", Time: time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)}},
			},
		},
		"not-a-list":        {metadata: `{"managedFields":"x"}`, wantErr: "metadata.managedFields is a string, not a list"},
		"null-entry":        {metadata: `{"managedFields":[null]}`, wantErr: "metadata.managedFields[0]: is a null, not an object"},
		"manager-number":    {metadata: `{"managedFields":[{"manager":1}]}`, wantErr: "metadata.managedFields[0]: manager is a number, not a string"},
		"time-not-rfc3339":  {metadata: `{"managedFields":[{"time":"yesterday"}]}`, wantErr: `metadata.managedFields[0]: time "yesterday" is not RFC 3339`},
		"time-a-list":       {metadata: `{"managedFields":[{"time":[]}]}`, wantErr: "metadata.managedFields[0]: time is a list, not a string"},
		"fields-not-object": {metadata: `{"managedFields":[{},{"fieldsV1":true}]}`, wantErr: "metadata.managedFields[1]: fieldsV1 is a boolean, not an object"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := mustObject(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":`+tc.metadata+`}`)
			got, err := ReadManagedFields(obj)
			if gotErr := errString(err); gotErr != tc.wantErr {
				t.Fatalf("error %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// DecodeManagedFields gives each entry its field set.
func TestDecodeManagedFieldsSets(t *testing.T) {
	obj := mustObject(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"managedFields":[
	  {"manager":"kubectl-edit","operation":"Update","fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{"f:image":{}}}}}}}},
	  {"manager":"empty","operation":"Update"}]}}`)
	mfs, err := DecodeManagedFields(obj)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.Manager+": "+mf.Fields.String())
	}
	want := []string{"kubectl-edit: .spec.template.spec.containers[name=\"nginx\"].image", "empty: "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("field sets (-want +got):\n%s", diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
