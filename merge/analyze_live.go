package merge

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// AnalyzeLive analyzes a stored object on its own: the state of its
// last-applied, the fields that drifted from it (which the next apply of
// the same manifest reverts), and the fields that the next apply keeps
// although last-applied does not have them (orphans, when the manifest does
// not add them).
func (a *Analyzer) AnalyzeLive(live *unstructured.Unstructured) (*Analysis, error) {
	ex, err := a.Explain(live)
	if err != nil {
		return nil, err
	}
	return ex.Analysis, nil
}
