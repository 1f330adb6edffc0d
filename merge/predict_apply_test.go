package merge

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// predictApply is a test helper, not API: the drivers analyze an apply
// after it happened (AnalyzeClientSideApply); the tests predict one before
// it from the manifest itself. It predicts `kubectl apply` of manifest onto live: it
// recomputes the patch and the resulting object, and lists what the apply
// reverts, what it leaves orphaned, whether it resets replicas or leaves a
// defaulted dependent behind, and the state of last-applied. When live's
// last-applied is invalid the analysis stops there and the ApplyResult is
// nil, as kubectl itself cannot compute the patch.
func (a *Analyzer) predictApply(live, manifest *unstructured.Unstructured) (*ApplyResult, *Analysis, error) {
	type answer struct {
		res *ApplyResult
		an  *Analysis
	}
	out, err := verified(a, "apply analysis", func(a *Analyzer) (answer, error) {
		res, an, err := a.analyzeApplyOf(live, manifest)
		return answer{res, an}, err
	})
	return out.res, out.an, err
}

func (a *Analyzer) analyzeApplyOf(live, manifest *unstructured.Unstructured) (*ApplyResult, *Analysis, error) {
	an := newAnalysis(live, "apply")
	info, original, parsed := a.lastAppliedInfo(live)
	an.LastApplied = info
	if info.Status == LastAppliedInvalid {
		return nil, an, nil
	}
	res, err := a.ApplyManifest(manifest, live)
	if err != nil {
		return nil, nil, err
	}
	an.Strategy = res.Strategy
	in := applyInput{kind: live.GetKind(), live: live, manifest: manifest, result: res.Result, originalParsed: parsed}
	if original != nil {
		in.original = original.Object
	}
	if err := a.analyzeApply(in, an); err != nil {
		return nil, nil, err
	}
	return res, an, nil
}
