package policy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// inputValue builds the policy input document of in as Rego sees it, the
// value that decoding Input.MarshalJSON gives, without encoding to JSON and
// parsing it back: Evaluate runs once per admission request. Every field
// follows its JSON tag (omitempty, omitzero, nil slices and maps as null);
// TestInputValueMatchesJSON holds the two forms equal.
func inputValue(in *Input) (ast.Value, error) {
	b := newObjectBuilder(5)
	b.add("request", requestValue(in.Request))
	b.add("namespace", ast.NewObject(item("name", str(in.Namespace.Name)), item("labels", labelsValue(in.Namespace.Labels))))
	b.add("classification", str(string(in.Classification)))
	if in.Analysis != nil {
		addConverted(&b, "analysis", in.Analysis, analysisValue)
	}
	if in.Autoscaling != nil {
		addConverted(&b, "autoscaling", in.Autoscaling, autoscalingValue)
	}
	return b.object()
}

func autoscalingValue(a *Autoscaling) (ast.Value, error) {
	list := ast.NullValue
	if a.Autoscalers != nil {
		terms := make([]*ast.Term, len(a.Autoscalers))
		for i, h := range a.Autoscalers {
			terms[i] = ast.NewTerm(ast.NewObject(item("name", str(h.Name)),
				item("minReplicas", number(h.MinReplicas)), item("maxReplicas", number(h.MaxReplicas)),
				item("currentReplicas", number(h.CurrentReplicas)), item("desiredReplicas", number(h.DesiredReplicas))))
		}
		list = ast.NewArray(terms...)
	}
	b := newObjectBuilder(2)
	b.add("autoscalers", list)
	if a.ManifestReplicas != nil {
		addConverted(&b, "manifestReplicas", a.ManifestReplicas, jsonValue)
	}
	return b.object()
}

// objectBuilder collects an object's entries in order. The first value
// that fails to convert stops it: later ones are not converted, and object
// returns that error.
type objectBuilder struct {
	entries [][2]*ast.Term
	err     error
}

// newObjectBuilder returns a builder with room for n entries, the most
// the object can have.
func newObjectBuilder(n int) objectBuilder {
	return objectBuilder{entries: make([][2]*ast.Term, 0, n)}
}

// add appends key: v.
func (b *objectBuilder) add(key string, v ast.Value) { b.entries = append(b.entries, item(key, v)) }

// addConverted appends key: conv(x), or keeps conv's error.
func addConverted[T any](b *objectBuilder, key string, x T, conv func(T) (ast.Value, error)) {
	if b.err != nil {
		return
	}
	v, err := conv(x)
	if err != nil {
		b.err = err
		return
	}
	b.add(key, v)
}

// object is the object of the entries added, or the error of the value
// that failed to convert.
func (b *objectBuilder) object() (ast.Value, error) {
	if b.err != nil {
		return nil, b.err
	}
	return ast.NewObject(b.entries...), nil
}

func item(key string, v ast.Value) [2]*ast.Term {
	return [2]*ast.Term{ast.StringTerm(key), ast.NewTerm(v)}
}

// str is a JSON string: encoding/json replaces invalid UTF-8, so such a
// string takes the JSON way.
func str(s string) ast.Value {
	if !utf8.ValidString(s) {
		v, _ := viaJSON(s) // encoding a string cannot fail
		return v
	}
	return ast.String(s)
}

// strs is a JSON list of strings.
func strs(ss []string) ast.Value {
	terms := make([]*ast.Term, len(ss))
	for i, s := range ss {
		terms[i] = ast.NewTerm(str(s))
	}
	return ast.NewArray(terms...)
}

func number(i int64) ast.Value {
	v, _ := ast.InterfaceToValue(json.Number(strconv.FormatInt(i, 10))) // always a number
	return v
}

func boolean(b bool) ast.Value { return ast.Boolean(b) }

func requestValue(r Request) ast.Value {
	groups := ast.NullValue
	if r.User.Groups != nil {
		terms := make([]*ast.Term, len(r.User.Groups))
		for i, g := range r.User.Groups {
			terms[i] = ast.NewTerm(str(g))
		}
		groups = ast.NewArray(terms...)
	}
	fields := [][2]*ast.Term{
		item("uid", str(r.UID)),
		item("operation", str(r.Operation)),
		item("subresource", str(r.Subresource)),
		item("dryRun", boolean(r.DryRun)),
		item("object", refValue(r.Object)),
	}
	if r.Resource != nil {
		fields = append(fields, item("resource", ast.NewObject(item("group", str(r.Resource.Group)), item("resource", str(r.Resource.Resource)))))
	}
	return ast.NewObject(append(fields,
		item("user", ast.NewObject(item("username", str(r.User.Username)), item("groups", groups),
			item("serviceAccount", boolean(r.User.ServiceAccount)))),
		item("fieldManager", str(r.FieldManager)),
	)...)
}

func labelsValue(labels map[string]string) ast.Value {
	if labels == nil {
		return ast.NullValue
	}
	kvs := make([][2]*ast.Term, 0, len(labels))
	for k, v := range labels {
		kvs = append(kvs, [2]*ast.Term{ast.NewTerm(str(k)), ast.NewTerm(str(v))})
	}
	return ast.NewObject(kvs...)
}

func refValue(r merge.ObjectRef) ast.Value {
	fields := [][2]*ast.Term{item("apiVersion", str(r.APIVersion)), item("kind", str(r.Kind))}
	if r.Namespace != "" {
		fields = append(fields, item("namespace", str(r.Namespace)))
	}
	return ast.NewObject(append(fields, item("name", str(r.Name)))...)
}

func analysisValue(a *merge.Analysis) (ast.Value, error) {
	la := [][2]*ast.Term{item("status", str(string(a.LastApplied.Status)))}
	if a.LastApplied.Error != "" {
		la = append(la, item("error", str(a.LastApplied.Error)))
	}
	if a.LastApplied.Fault != "" {
		la = append(la, item("fault", str(string(a.LastApplied.Fault))))
	}
	la = append(la, item("bytes", number(int64(a.LastApplied.Bytes))))
	if a.LastApplied.Replaced {
		la = append(la, item("replaced", boolean(true)))
	}
	if a.LastApplied.KubectlMade {
		la = append(la, item("kubectlMade", boolean(true)))
	}
	b := newObjectBuilder(16)
	b.add("object", refValue(a.Object))
	b.add("operation", str(a.Operation))
	if a.Strategy != "" {
		b.add("strategy", str(string(a.Strategy)))
	}
	b.add("lastApplied", ast.NewObject(la...))
	b.add("annotationsBytes", number(int64(a.AnnotationsBytes)))
	b.add("lastAppliedTooLarge", boolean(a.LastAppliedTooLarge))
	lists := []struct {
		key   string
		facts []merge.FieldFact
	}{{"drift", a.Drift}, {"imperativeChanges", a.ImperativeChanges},
		{"applyOwnedChanges", a.ApplyOwnedChanges}, {"reverts", a.Reverts},
		{"orphans", a.Orphans}, {"defaultedDependents", a.DefaultedDependents}}
	for _, l := range lists {
		addConverted(&b, l.key, l.facts, factsValue)
	}
	addConverted(&b, "appliers", a.Appliers, ownersValue)
	if a.ReplicasReset != nil {
		addConverted(&b, "replicasReset", a.ReplicasReset, factValue)
	}
	if a.Rollback != nil {
		addConverted(&b, "rollback", a.Rollback, rollbackValue)
	}
	if a.HandOver != nil {
		b.add("handOver", handoverRecordValue(a.HandOver))
	}
	if a.DroppedRecord != nil {
		b.add("droppedRecord", handoverRecordValue(a.DroppedRecord))
	}
	return b.object()
}

// factsValue is a list of facts.
func factsValue(facts []merge.FieldFact) (ast.Value, error) {
	if facts == nil {
		return ast.NullValue, nil
	}
	return arrayValue(len(facts), func(i int) (ast.Value, error) { return factValue(&facts[i]) })
}

func factValue(f *merge.FieldFact) (ast.Value, error) {
	b := newObjectBuilder(16)
	b.add("path", str(f.Path.String()))
	for _, kv := range []struct {
		key string
		v   any
	}{{"live", f.Live}, {"result", f.Result}, {"lastApplied", f.LastApplied}, {"manifest", f.Manifest}} {
		if kv.v != nil {
			addConverted(&b, kv.key, kv.v, jsonValue)
		}
	}
	if len(f.Owners) > 0 {
		addConverted(&b, "owners", f.Owners, ownersValue)
	}
	if len(f.DependsOn) > 0 {
		b.add("dependsOn", str(f.DependsOn.String()))
	}
	if f.Rejected {
		b.add("rejected", boolean(true))
	}
	if f.RemovePatch != "" {
		b.add("removePatch", str(f.RemovePatch))
	}
	if f.Pointer != "" {
		b.add("pointer", str(f.Pointer))
	}
	if len(f.RemovedWith) > 0 {
		b.add("removedWith", strs(f.RemovedWith))
	}
	if f.SetPatch != "" {
		b.add("setPatch", str(f.SetPatch))
	}
	if f.RestoredByUndo {
		b.add("restoredByUndo", boolean(true))
	}
	if f.Frozen {
		b.add("frozen", boolean(true))
	}
	if f.RevertRefused {
		b.add("revertRefused", boolean(true))
	}
	return b.object()
}

func ownersValue(owners []merge.Owner) (ast.Value, error) {
	return arrayValue(len(owners), func(i int) (ast.Value, error) { return ownerValue(owners[i]) })
}

// arrayValue is the array of n elements whose i-th is elem(i), or the
// first error of elem.
func arrayValue(n int, elem func(i int) (ast.Value, error)) (ast.Value, error) {
	terms := make([]*ast.Term, n)
	for i := range terms {
		v, err := elem(i)
		if err != nil {
			return nil, err
		}
		terms[i] = ast.NewTerm(v)
	}
	return ast.NewArray(terms...), nil
}

func ownerValue(o merge.Owner) (ast.Value, error) {
	b := newObjectBuilder(5)
	b.add("manager", str(o.Manager))
	b.add("operation", str(o.Operation))
	if o.Subresource != "" {
		b.add("subresource", str(o.Subresource))
	}
	if !o.Time.IsZero() {
		addConverted(&b, "time", o.Time, timeValue)
	}
	if o.APIVersion != "" {
		b.add("apiVersion", str(o.APIVersion))
	}
	return b.object()
}

// timeValue is a time as time.Time.MarshalJSON writes it (RFC 3339 with
// nanoseconds; an error for years outside 0–9999, as json.Marshal).
func timeValue(t time.Time) (ast.Value, error) {
	raw, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return ast.String(raw[1 : len(raw)-1]), nil
}

func rollbackValue(rb *merge.Rollback) (ast.Value, error) {
	b := newObjectBuilder(10)
	b.add("revisionKind", str(rb.RevisionKind))
	b.add("revisionName", str(rb.RevisionName))
	b.add("revision", number(rb.Revision))
	b.add("confirmed", boolean(rb.Confirmed))
	b.add("staleLastApplied", boolean(rb.StaleLastApplied))
	if rb.RepairSource != "" {
		b.add("repairSource", str(rb.RepairSource))
	}
	if rb.RepairedLastApplied != "" {
		b.add("repairedLastApplied", str(rb.RepairedLastApplied))
	}
	addConverted(&b, "changes", rb.Changes, factsValue)
	if len(rb.LastAppliedUpdaters) > 0 {
		b.add("lastAppliedUpdaters", strs(rb.LastAppliedUpdaters))
	}
	if rb.DroppedRecord != nil {
		b.add("droppedRecord", handoverRecordValue(rb.DroppedRecord))
	}
	return b.object()
}

func handoverRecordValue(r *merge.HandoverRecord) ast.Value {
	paths := ast.NullValue
	if r.Paths != nil {
		paths = strs(r.Paths)
	}
	items := [][2]*ast.Term{item("value", str(r.Value)), item("paths", paths), item("fits", boolean(r.Fits))}
	if r.NoAnnotations {
		items = append(items, item("noAnnotations", boolean(true)))
	}
	return ast.NewObject(items...)
}

// jsonValue converts a decoded JSON value (what unstructured objects hold)
// into the value its JSON encoding parses to; anything else takes the JSON
// way.
func jsonValue(x any) (ast.Value, error) {
	switch x := x.(type) {
	case nil:
		return ast.NullValue, nil
	case bool:
		return boolean(x), nil
	case string:
		return str(x), nil
	case int64:
		return number(x), nil
	case int:
		return number(int64(x)), nil
	case []any:
		if x == nil {
			return ast.NullValue, nil
		}
		return arrayValue(len(x), func(i int) (ast.Value, error) { return jsonValue(x[i]) })
	case map[string]any:
		if x == nil {
			return ast.NullValue, nil
		}
		kvs := make([][2]*ast.Term, 0, len(x))
		for k, e := range x {
			v, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			kvs = append(kvs, [2]*ast.Term{ast.NewTerm(str(k)), ast.NewTerm(v)})
		}
		return ast.NewObject(kvs...), nil
	}
	return viaJSON(x)
}

// viaJSON converts x as Evaluate did before inputValue: encoded to JSON and
// parsed back (floats, json.Number, typed values).
func viaJSON(x any) (ast.Value, error) {
	raw, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return ast.ValueFromReader(bytes.NewReader(raw))
}
