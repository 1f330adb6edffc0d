package auditverb

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
)

// -o yaml is the document of -o json, in YAML.
func TestAuditYAMLIsTheJSONDocument(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/cluster/deployment-edited.yaml", "testdata/cluster/deployment-created.yaml")
	jsonOut, _, jsonCode := run(t, connect, "-A", "-o", "json")
	yamlOut, stderr, yamlCode := run(t, connect, "-A", "-o", "yaml")
	if jsonCode != yamlCode || yamlCode != cli.ExitFailure {
		t.Errorf("exit %d with -o yaml, %d with -o json; want %d for both (a deny)", yamlCode, jsonCode, cli.ExitFailure)
	}
	var fromJSON, fromYAML map[string]any
	if err := yaml.Unmarshal([]byte(jsonOut), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(yamlOut), &fromYAML); err != nil {
		t.Fatalf("decoding -o yaml: %v; stderr %q", err, stderr)
	}
	if len(fromYAML["findings"].([]any)) == 0 {
		t.Errorf("no findings in -o yaml:\n%s", yamlOut)
	}
	if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
		t.Errorf("-o yaml differs from -o json (-json +yaml):\n%s", diff)
	}
	if yamlOut[0] == '{' {
		t.Errorf("-o yaml printed JSON:\n%s", yamlOut)
	}
}
