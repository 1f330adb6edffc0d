package kinds_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestValuesTheServerRespellsAreNoChange applies manifests whose values
// the API server stores in another spelling (base64 wrapped or with
// padding bits that are not zero, quantities written as numbers or in
// other units), as real manifests have them. A break-glass edit moves the
// value away (warned about), and the admin's patch writes last-applied's
// value back in the spelling the server stores: that write restores what
// last-applied holds, so it passes without a word, and so do the applies
// before and after it (no drift to revert). kubectl hygiene diff predicts
// every apply.
func TestValuesTheServerRespellsAreNoChange(t *testing.T) {
	cases := []struct {
		name, file, object string
		// away moves the value away from last-applied's; back writes
		// last-applied's value in the stored spelling.
		away, back string
		// stored is the jsonpath of the value and what the server stores
		// for last-applied's.
		jsonpath, stored string
	}{{
		name: "Secret data", file: "secret.yaml", object: "secret/respelled",
		away:     `{"data":{"padded":"Yg==","wrapped":"eHl6"}}`,
		back:     `{"data":{"padded":"YQ==","wrapped":"YWJjZGVmZ2hp"}}`,
		jsonpath: "{.data.padded} {.data.wrapped}", stored: "YQ== YWJjZGVmZ2hp",
	}, {
		name: "ConfigMap binaryData", file: "configmap.yaml", object: "configmap/respelled",
		away:     `{"binaryData":{"padded":"Yg==","wrapped":"eHl6"}}`,
		back:     `{"binaryData":{"padded":"YQ==","wrapped":"YWJjZGVmZ2hp"}}`,
		jsonpath: "{.binaryData.padded} {.binaryData.wrapped}", stored: "YQ== YWJjZGVmZ2hp",
	}, {
		name: "HorizontalPodAutoscaler metrics", file: "hpa.yaml", object: "horizontalpodautoscaler.autoscaling/respelled",
		away: `{"spec":{"metrics":[` +
			`{"type":"Pods","pods":{"metric":{"name":"requests_per_second"},"target":{"type":"AverageValue","averageValue":"40"}}},` +
			`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"1Gi"}}}]}}`,
		back: `{"spec":{"metrics":[` +
			`{"type":"Pods","pods":{"metric":{"name":"requests_per_second"},"target":{"type":"AverageValue","averageValue":"30"}}},` +
			`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"512Mi"}}}]}}`,
		jsonpath: "{.spec.metrics[0].pods.target.averageValue} {.spec.metrics[1].resource.target.averageValue}", stored: "30 512Mi",
	}}
	grantBreakGlass(t)
	plugins := filepath.Dir(framework.HygieneBinary(t))
	pred := framework.NewPredictor(t)
	t.Cleanup(func() {
		want := fmt.Sprintf("kubectl hygiene diff predicted %d applies exactly (0 messages of apply-hygiene, %d applies without any)", 3*len(cases), 3*len(cases))
		if got := pred.Summary(); got != want {
			t.Errorf("%s, want %s", got, want)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := framework.New(t)
			k := f.Kubectl
			k.Env = []string{"PATH=" + plugins + ":" + os.Getenv("PATH")}
			bob := f.KubectlAs(t, "oncall-bob", breakGlassGroup)
			file := filepath.Join("testdata", "respelled", c.file)
			apply := func(want string) {
				t.Helper()
				res := pred.Apply(t, k, file).MustSucceed(t)
				framework.WantLines(t, res.Stdout, c.object+" "+want)
				framework.WantLines(t, res.Stderr)
			}

			apply("created")
			if got := k.JSONPath(t, c.object, c.jsonpath); got != c.stored {
				t.Fatalf("stored %s = %q, want %q", c.jsonpath, got, c.stored)
			}
			// The manifest's own values, respelled by the server: no drift.
			apply("configured")

			res := bob.Run(t, "patch", c.object, "--type=merge", "-p", c.away).MustSucceed(t)
			framework.WantLines(t, res.Stdout, c.object+" patched")
			framework.WantMatch(t, res.Stderr, `Warning: \[imperative-edit\] .*`)

			res = k.Run(t, "patch", c.object, "--type=merge", "-p", c.back).MustSucceed(t)
			framework.WantLines(t, res.Stdout, c.object+" patched")
			framework.WantLines(t, res.Stderr)
			if got := k.JSONPath(t, c.object, c.jsonpath); got != c.stored {
				t.Errorf("after the patch back, %s = %q, want %q", c.jsonpath, got, c.stored)
			}

			apply("configured")
		})
	}
}
