package junit_test

import (
	"os"
	"time"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/junit"
)

func ExampleWrite() {
	_ = junit.Write(os.Stdout, []junit.Result{
		{File: "deploy_test.yaml", Name: "edit is denied", Time: 12 * time.Millisecond},
		{File: "deploy_test.yaml", Name: "apply is allowed", Diff: "-deny\n+allow", Time: 3 * time.Millisecond},
	})
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <testsuites name="kubectl hygiene test" tests="2" failures="1" errors="0" time="0.015">
	//   <testsuite name="deploy_test.yaml" tests="2" failures="1" errors="0" skipped="0" time="0.015">
	//     <testcase name="edit is denied" classname="deploy_test.yaml" time="0.012"></testcase>
	//     <testcase name="apply is allowed" classname="deploy_test.yaml" time="0.003">
	//       <failure message="decisions mismatch (-want +got)" type="DecisionsMismatch">-deny&#xA;+allow</failure>
	//     </testcase>
	//   </testsuite>
	// </testsuites>
}
