package linediff_test

import (
	"fmt"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/linediff"
)

func ExampleUnified() {
	fmt.Print(linediff.Unified("live", "fixed", "replicas: 3\nimage: web:1\n", "replicas: 3\nimage: web:2\n"))
	// Output:
	// --- live
	// +++ fixed
	// @@ -1,2 +1,2 @@
	//  replicas: 3
	// -image: web:1
	// +image: web:2
}
