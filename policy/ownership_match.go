package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// ownership is the compiled OwnershipRules of a Config.
type ownership []declaration

// declaration is one compiled OwnershipRule: which objects, which fields.
type declaration struct {
	// objects reports whether the rule is about an object.
	objects func(gvk schema.GroupVersionKind, ref merge.ObjectRef, labels map[string]string) bool
	fields  []merge.Declared
}

// replicasPath is the field of the replicas facts outside Analysis
// (Input.Autoscaling): spec.replicas.
func replicasPath() merge.Path {
	spec, replicas := "spec", "replicas"
	return merge.Path{{FieldName: &spec}, {FieldName: &replicas}}
}

// apply returns in without the facts about fields declared owned for its
// object (merge.Analysis.WithoutDeclared), and without its autoscaling
// facts when the cluster owns spec.replicas. in itself is returned when
// nothing is declared; it is never changed.
func (o ownership) apply(in *Input) *Input {
	if len(o) == 0 || in.Analysis == nil {
		return in
	}
	ds := o.declared(in.Analysis)
	if len(ds) == 0 {
		return in
	}
	an := in.Analysis.WithoutDeclared(in.Request.FieldManager, ds)
	auto := in.Autoscaling
	if auto != nil && slices.ContainsFunc(ds, func(d merge.Declared) bool { return d.Manager == "" && d.Pattern.Covers(replicasPath()) }) {
		auto = nil
	}
	if an == in.Analysis && auto == in.Autoscaling {
		return in
	}
	out := *in
	out.Analysis, out.Autoscaling = an, auto
	return &out
}

// declared returns the fields declared owned in an's object: those of the
// rules about it.
func (o ownership) declared(an *merge.Analysis) []merge.Declared {
	ref := an.Object
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var ds []merge.Declared
	for _, d := range o {
		if d.objects(gvk, ref, an.Labels) {
			ds = append(ds, d.fields...)
		}
	}
	return ds
}

// compileOwnership compiles rules; the errors name each rule's field.
func compileOwnership(rules []OwnershipRule) (ownership, field.ErrorList) {
	var out ownership
	var errs field.ErrorList
	root := field.NewPath("ownership")
	for i, r := range rules {
		p := root.Index(i)
		var d declaration
		var es field.ErrorList
		switch {
		case r.ArgoCD != nil && (r.Flux != nil || !r.ownFormEmpty()):
			es = field.ErrorList{field.Invalid(p.Child("argoCD"), "", "an Argo CD entry stands alone: no flux, kinds, paths, owner, namespace, name or selector beside it")}
		case r.Flux != nil && !r.ownFormEmpty():
			es = field.ErrorList{field.Invalid(p.Child("flux"), "", "a Flux entry stands alone: no kinds, paths, owner, namespace, name or selector beside it")}
		case r.ArgoCD != nil:
			d, es = compileArgoCD(p.Child("argoCD"), *r.ArgoCD)
		case r.Flux != nil:
			d, es = compileFlux(p.Child("flux"), *r.Flux)
		default:
			d, es = compileOwn(p, r)
		}
		if errs = append(errs, es...); len(es) == 0 {
			out = append(out, d)
		}
	}
	return out, errs
}

func (r OwnershipRule) ownFormEmpty() bool {
	return len(r.Kinds) == 0 && len(r.Paths) == 0 && r.Owner == "" && r.Namespace == "" && r.Name == "" && r.Selector == nil
}

// compileOwn compiles a rule in apply-hygiene's own form.
func compileOwn(p *field.Path, r OwnershipRule) (declaration, field.ErrorList) {
	errs := validateOwner(p.Child("owner"), r.Owner)
	fields, es := patterns(p.Child("paths"), r.Paths, false, managerOf(r.Owner))
	errs = append(errs, es...)
	if len(r.Kinds) == 0 {
		errs = append(errs, field.Required(p.Child("kinds"), `at least one kind: "Kind", "group/Kind", "*" or {group, kind}`))
	}
	for i, k := range r.Kinds {
		errs = append(errs, validateKindRef(p.Child("kinds").Index(i), k)...)
	}
	sel := labels.Everything()
	if r.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(r.Selector)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("selector"), field.OmitValueType{}, err.Error()))
		}
		sel = s
	}
	kinds, ns, name := r.Kinds, r.Namespace, r.Name
	objects := func(gvk schema.GroupVersionKind, ref merge.ObjectRef, ls map[string]string) bool {
		return slices.ContainsFunc(kinds, func(k KindRef) bool { return k.matches(gvk) }) &&
			(ns == "" || ns == ref.Namespace) && (name == "" || name == ref.Name) && sel.Matches(labels.Set(ls))
	}
	return declaration{objects: objects, fields: fields}, errs
}

func (k KindRef) matches(gvk schema.GroupVersionKind) bool {
	return (k.Group == "*" || k.Group == gvk.Group) && (k.Kind == "*" || k.Kind == gvk.Kind)
}

// validateKindRef checks a kind's form: a kind is CamelCase (Deployment,
// not deployments), a group a DNS subdomain.
func validateKindRef(p *field.Path, k KindRef) field.ErrorList {
	var errs field.ErrorList
	if k.Kind != "*" && (k.Kind == "" || !unicode.IsUpper(rune(k.Kind[0])) || strings.ContainsAny(k.Kind, "./ ")) {
		errs = append(errs, field.Invalid(p.Child("kind"), k.Kind, `a kind is written as the API's kind, e.g. Deployment (not the resource, deployments), or "*"`))
	}
	if k.Group != "" && k.Group != "*" {
		if msgs := validation.IsDNS1123Subdomain(k.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("group"), k.Group, `a group is an API group without its version, e.g. apps for apps/v1 ("Kind", "group/Kind", "*" or {group, kind})`))
		}
	}
	return errs
}

// compileArgoCD maps an Argo CD ignoreDifferences entry: its jsonPointers
// owned by the cluster, every field that one of its managedFieldsManagers
// writes owned by that manager.
func compileArgoCD(p *field.Path, a ArgoCDIgnoreDifference) (declaration, field.ErrorList) {
	var errs field.ErrorList
	if len(a.JQPathExpressions) > 0 {
		errs = append(errs, field.Invalid(p.Child("jqPathExpressions"), a.JQPathExpressions[0],
			"jq path expressions are not supported: write them as jsonPointers, or as an ownership rule's paths with * for any list element or map key (spec.template.spec.containers[*].image)"))
	}
	if len(a.JSONPointers) == 0 && len(a.ManagedFieldsManagers) == 0 && len(a.JQPathExpressions) == 0 {
		errs = append(errs, field.Required(p, "jsonPointers or managedFieldsManagers"))
	}
	var fields []merge.Declared
	if len(a.JSONPointers) > 0 {
		fs, es := patterns(p.Child("jsonPointers"), a.JSONPointers, true, "")
		fields, errs = append(fields, fs...), append(errs, es...)
	}
	everything, err := merge.ParsePattern(merge.Wildcard)
	if err != nil {
		return declaration{}, append(errs, field.InternalError(p, err))
	}
	for i, m := range a.ManagedFieldsManagers {
		if es := validateOwner(p.Child("managedFieldsManagers").Index(i), m); len(es) > 0 || m == ClusterOwner {
			errs = append(errs, es...)
			continue
		}
		fields = append(fields, merge.Declared{Pattern: everything, Manager: m})
	}
	k := KindRef{Group: a.Group, Kind: a.Kind}
	errs = append(errs, validateKindRef(p, k)...)
	objects := func(gvk schema.GroupVersionKind, ref merge.ObjectRef, _ map[string]string) bool {
		return k.matches(gvk) && (a.Namespace == "" || a.Namespace == ref.Namespace) && (a.Name == "" || a.Name == ref.Name)
	}
	return declaration{objects: objects, fields: fields}, errs
}

// compileFlux maps a Flux driftIgnoreRules entry: its paths owned by the
// cluster in the objects its target selects.
func compileFlux(p *field.Path, f FluxDriftIgnoreRule) (declaration, field.ErrorList) {
	fields, errs := patterns(p.Child("paths"), f.Paths, true, "")
	if f.Target == nil {
		return declaration{objects: func(schema.GroupVersionKind, merge.ObjectRef, map[string]string) bool { return true }, fields: fields}, errs
	}
	t, tp := *f.Target, p.Child("target")
	if t.AnnotationSelector != "" {
		errs = append(errs, field.Invalid(tp.Child("annotationSelector"), t.AnnotationSelector, "annotation selectors are not supported: select by labelSelector, kind, name or namespace"))
	}
	sel, err := labels.Parse(t.LabelSelector)
	if err != nil {
		errs = append(errs, field.Invalid(tp.Child("labelSelector"), t.LabelSelector, err.Error()))
	}
	res := make([]*regexp.Regexp, 5)
	for i, v := range []struct{ name, expr string }{{"group", t.Group}, {"version", t.Version}, {"kind", t.Kind}, {"name", t.Name}, {"namespace", t.Namespace}} {
		if v.expr == "" {
			continue
		}
		re, err := regexp.Compile("^(?:" + v.expr + ")$")
		if err != nil {
			errs = append(errs, field.Invalid(tp.Child(v.name), v.expr, fmt.Sprintf("not a regular expression: %v", err)))
		}
		res[i] = re
	}
	match := func(re *regexp.Regexp, s string) bool { return re == nil || re.MatchString(s) }
	objects := func(gvk schema.GroupVersionKind, ref merge.ObjectRef, ls map[string]string) bool {
		return match(res[0], gvk.Group) && match(res[1], gvk.Version) && match(res[2], gvk.Kind) &&
			match(res[3], ref.Name) && match(res[4], ref.Namespace) && (sel == nil || sel.Matches(labels.Set(ls)))
	}
	return declaration{objects: objects, fields: fields}, errs
}
