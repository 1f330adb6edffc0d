package reports

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Format is the kind of policy report written.
type Format string

// The formats; FormatNone publishes nothing.
const (
	FormatNone        Format = "none"
	FormatOpenReports Format = "openreports"
	FormatWGPolicy    Format = "wgpolicy"
)

// ParseFormat parses a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatNone, FormatOpenReports, FormatWGPolicy:
		return f, nil
	}
	return "", fmt.Errorf("unknown report format %q: want none, openreports or wgpolicy", s)
}

// kinds are a format's namespaced and cluster-scoped report resources.
type kinds struct {
	namespaced     schema.GroupVersionResource
	cluster        schema.GroupVersionResource
	namespacedKind string
	clusterKind    string
}

// resources returns the format's report kinds and resources.
func (f Format) resources() (kinds, error) {
	switch f {
	case FormatOpenReports:
		gv := schema.GroupVersion{Group: "openreports.io", Version: "v1alpha1"}
		return kinds{namespaced: gv.WithResource("reports"), cluster: gv.WithResource("clusterreports"),
			namespacedKind: "Report", clusterKind: "ClusterReport"}, nil
	case FormatWGPolicy:
		gv := schema.GroupVersion{Group: "wgpolicyk8s.io", Version: "v1alpha2"}
		return kinds{namespaced: gv.WithResource("policyreports"), cluster: gv.WithResource("clusterpolicyreports"),
			namespacedKind: "PolicyReport", clusterKind: "ClusterPolicyReport"}, nil
	}
	return kinds{}, fmt.Errorf("format %q writes no reports", f)
}
