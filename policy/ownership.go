package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// ClusterOwner is the OwnershipRule Owner that declares fields any writer
// may set.
const ClusterOwner = "cluster"

// OwnershipRule declares fields that something other than the manifest
// writes: a mesh's or a secrets tool's annotations, an autoscaler's
// replicas, an operator's spec fields. A declared field is never an
// imperative edit, a server-side applier's field changed, a revert, an
// orphan, drift or a replicas finding, for any rule, the user's included:
// the engine drops those facts before Rego sees them (see
// docs/rules.md#ownership).
//
// A rule is written in apply-hygiene's own form (Kinds, Paths, Owner and
// the optional Namespace, Name and Selector), or as one entry of Argo CD's
// ignoreDifferences (ArgoCD) or of Flux's driftIgnoreRules (Flux), alone.
type OwnershipRule struct {
	// Kinds are the kinds of object the rule is about, each "Kind" (in any
	// API group), "group/Kind" (e.g. apps/Deployment, or /Service for the
	// core group), "*" (any kind), or {group, kind}. Required in the own
	// form.
	Kinds []KindRef `json:"kinds,omitempty"`
	// Namespace, when set, limits the rule to that namespace.
	Namespace string `json:"namespace,omitempty"`
	// Name, when set, limits the rule to objects of that name.
	Name string `json:"name,omitempty"`
	// Selector, when set, limits the rule to objects whose labels it
	// selects.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Paths are the fields, in the notation messages print
	// (spec.replicas, metadata.annotations[sidecar.istio.io/status],
	// spec.template.spec.containers[name=web].image), with * for any list
	// element or map key (spec.template.spec.containers[*].image,
	// metadata.annotations.*). A path covers what lies beneath it.
	// Required in the own form.
	Paths []string `json:"paths,omitempty"`
	// Owner is ClusterOwner (any writer owns the fields) or a field
	// manager's name (the fields are declared only where that manager
	// wrote them: its own writes, and drift, reverts and orphans that
	// metadata.managedFields say it owns). Required in the own form.
	Owner string `json:"owner,omitempty"`
	// ArgoCD is one entry of an Argo CD Application's
	// spec.ignoreDifferences, as written there.
	ArgoCD *ArgoCDIgnoreDifference `json:"argoCD,omitempty"`
	// Flux is one entry of a Flux Kustomization's spec.driftIgnoreRules
	// (or a HelmRelease's spec.driftDetection.ignore), as written there.
	Flux *FluxDriftIgnoreRule `json:"flux,omitempty"`
}

// KindRef names a kind by API group and kind. Group "*" is any group, ""
// the core group; Kind "*" is any kind.
type KindRef struct {
	// Group is the API group.
	Group string `json:"group"`
	// Kind is the kind, e.g. Deployment.
	Kind string `json:"kind"`
}

// UnmarshalJSON reads {group, kind} or the string forms "Kind" (any
// group), "group/Kind" and "*".
func (k *KindRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		type plain KindRef
		var p plain
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("a kind is \"Kind\", \"group/Kind\", \"*\" or {group, kind}: %w", err)
		}
		*k = KindRef(p)
		return nil
	}
	*k = KindRef{Group: "*", Kind: s}
	if i := strings.LastIndex(s, "/"); i >= 0 {
		*k = KindRef{Group: s[:i], Kind: s[i+1:]}
	}
	return nil
}

// ArgoCDIgnoreDifference is one entry of Argo CD's ignoreDifferences.
// jqPathExpressions are refused: write them as JSONPointers or as an
// OwnershipRule's Paths.
type ArgoCDIgnoreDifference struct {
	// Group is the API group; "" for the core group.
	Group string `json:"group,omitempty"`
	// Kind is the kind. Required.
	Kind string `json:"kind"`
	// Name, when set, limits the entry to objects of that name.
	Name string `json:"name,omitempty"`
	// Namespace, when set, limits the entry to that namespace.
	Namespace string `json:"namespace,omitempty"`
	// JSONPointers are fields any writer may set (owner cluster).
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are refused with an error that says what to write.
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// ManagedFieldsManagers are field managers that own whatever they
	// write.
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// FluxDriftIgnoreRule is one entry of Flux's driftIgnoreRules: JSON
// pointers that any writer may set (owner cluster) in the objects Target
// selects.
type FluxDriftIgnoreRule struct {
	// Paths are JSON pointers. Required.
	Paths []string `json:"paths"`
	// Target selects objects; every object when left out.
	Target *FluxSelector `json:"target,omitempty"`
}

// FluxSelector is Flux's (kustomize's) selector. Group, Version, Kind,
// Name and Namespace are regular expressions matched against the whole
// value, as in Flux; AnnotationSelector is refused (apply-hygiene's facts
// do not carry annotations to select by).
type FluxSelector struct {
	// Group is the API group.
	Group string `json:"group,omitempty"`
	// Version is the API version.
	Version string `json:"version,omitempty"`
	// Kind is the kind.
	Kind string `json:"kind,omitempty"`
	// Name is the object's name.
	Name string `json:"name,omitempty"`
	// Namespace is the object's namespace.
	Namespace string `json:"namespace,omitempty"`
	// LabelSelector is a label selector in kubectl's string form, e.g.
	// "app=web,tier in (front)".
	LabelSelector string `json:"labelSelector,omitempty"`
	// AnnotationSelector is refused.
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// validateOwnership compiles rules, reporting every error.
func validateOwnership(rules []OwnershipRule) field.ErrorList {
	_, errs := compileOwnership(rules)
	return errs
}

// validateOwner checks an owner: ClusterOwner or a field manager name.
func validateOwner(p *field.Path, owner string) field.ErrorList {
	if owner == "" {
		return field.ErrorList{field.Required(p, `"cluster" or a field manager name`)}
	}
	if owner == ClusterOwner {
		return nil
	}
	return metav1validation.ValidateFieldManager(owner, p)
}

// managerOf is the merge.Declared manager of owner.
func managerOf(owner string) string {
	if owner == ClusterOwner {
		return ""
	}
	return owner
}

// patterns parses paths, in apply-hygiene's notation or, with pointers, as
// JSON pointers.
func patterns(p *field.Path, paths []string, pointers bool, manager string) ([]merge.Declared, field.ErrorList) {
	if len(paths) == 0 {
		return nil, field.ErrorList{field.Required(p, "at least one path")}
	}
	var out []merge.Declared
	var errs field.ErrorList
	for i, s := range paths {
		parse := merge.ParsePattern
		if pointers {
			parse = merge.PatternFromJSONPointer
		}
		pat, err := parse(s)
		if err != nil {
			errs = append(errs, field.Invalid(p.Index(i), s, err.Error()))
			continue
		}
		out = append(out, merge.Declared{Pattern: pat, Manager: manager})
	}
	return out, errs
}
