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
	fields := [][2]*ast.Term{
		item("request", requestValue(in.Request)),
		item("namespace", ast.NewObject(item("name", str(in.Namespace.Name)), item("labels", labelsValue(in.Namespace.Labels)))),
		item("classification", str(string(in.Classification))),
	}
	if in.Analysis != nil {
		an, err := analysisValue(in.Analysis)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item("analysis", an))
	}
	if in.Autoscaling != nil {
		v, err := autoscalingValue(in.Autoscaling)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item("autoscaling", v))
	}
	return ast.NewObject(fields...), nil
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
	fields := [][2]*ast.Term{item("autoscalers", list)}
	if a.ManifestReplicas != nil {
		v, err := jsonValue(a.ManifestReplicas)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item("manifestReplicas", v))
	}
	return ast.NewObject(fields...), nil
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
	la = append(la, item("bytes", number(int64(a.LastApplied.Bytes))))
	fields := [][2]*ast.Term{item("object", refValue(a.Object)), item("operation", str(a.Operation))}
	if a.Strategy != "" {
		fields = append(fields, item("strategy", str(string(a.Strategy))))
	}
	fields = append(fields, item("lastApplied", ast.NewObject(la...)),
		item("annotationsBytes", number(int64(a.AnnotationsBytes))),
		item("lastAppliedTooLarge", boolean(a.LastAppliedTooLarge)))
	lists := []struct {
		key   string
		facts []merge.FieldFact
	}{{"drift", a.Drift}, {"imperativeChanges", a.ImperativeChanges},
		{"applyOwnedChanges", a.ApplyOwnedChanges}, {"reverts", a.Reverts},
		{"orphans", a.Orphans}, {"defaultedDependents", a.DefaultedDependents}}
	for _, l := range lists {
		v, err := factsValue(l.facts)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item(l.key, v))
	}
	appliers, err := ownersValue(a.Appliers)
	if err != nil {
		return nil, err
	}
	fields = append(fields, item("appliers", appliers))
	if a.ReplicasReset != nil {
		v, err := factValue(a.ReplicasReset)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item("replicasReset", v))
	}
	if a.Rollback != nil {
		v, err := rollbackValue(a.Rollback)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item("rollback", v))
	}
	return ast.NewObject(fields...), nil
}

// factsValue is a list of facts.
func factsValue(facts []merge.FieldFact) (ast.Value, error) {
	if facts == nil {
		return ast.NullValue, nil
	}
	terms := make([]*ast.Term, len(facts))
	for i := range facts {
		v, err := factValue(&facts[i])
		if err != nil {
			return nil, err
		}
		terms[i] = ast.NewTerm(v)
	}
	return ast.NewArray(terms...), nil
}

func factValue(f *merge.FieldFact) (ast.Value, error) {
	fields := [][2]*ast.Term{item("path", str(f.Path.String()))}
	for _, kv := range []struct {
		key string
		v   any
	}{{"live", f.Live}, {"result", f.Result}, {"lastApplied", f.LastApplied}, {"manifest", f.Manifest}} {
		if kv.v == nil {
			continue
		}
		v, err := jsonValue(kv.v)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item(kv.key, v))
	}
	if len(f.Owners) > 0 {
		v, err := ownersValue(f.Owners)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item("owners", v))
	}
	if len(f.DependsOn) > 0 {
		fields = append(fields, item("dependsOn", str(f.DependsOn.String())))
	}
	if f.Rejected {
		fields = append(fields, item("rejected", boolean(true)))
	}
	if f.RemovePatch != "" {
		fields = append(fields, item("removePatch", str(f.RemovePatch)))
	}
	if f.Pointer != "" {
		fields = append(fields, item("pointer", str(f.Pointer)))
	}
	if len(f.RemovedWith) > 0 {
		fields = append(fields, item("removedWith", strs(f.RemovedWith)))
	}
	if f.SetPatch != "" {
		fields = append(fields, item("setPatch", str(f.SetPatch)))
	}
	if f.RestoredByUndo {
		fields = append(fields, item("restoredByUndo", boolean(true)))
	}
	return ast.NewObject(fields...), nil
}

func ownersValue(owners []merge.Owner) (ast.Value, error) {
	terms := make([]*ast.Term, len(owners))
	for i, o := range owners {
		v, err := ownerValue(o)
		if err != nil {
			return nil, err
		}
		terms[i] = ast.NewTerm(v)
	}
	return ast.NewArray(terms...), nil
}

func ownerValue(o merge.Owner) (ast.Value, error) {
	fields := [][2]*ast.Term{item("manager", str(o.Manager)), item("operation", str(o.Operation))}
	if o.Subresource != "" {
		fields = append(fields, item("subresource", str(o.Subresource)))
	}
	if !o.Time.IsZero() {
		t, err := timeValue(o.Time)
		if err != nil {
			return nil, err
		}
		fields = append(fields, item("time", t))
	}
	if o.APIVersion != "" {
		fields = append(fields, item("apiVersion", str(o.APIVersion)))
	}
	return ast.NewObject(fields...), nil
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
	fields := [][2]*ast.Term{item("revisionKind", str(rb.RevisionKind)), item("revisionName", str(rb.RevisionName)),
		item("revision", number(rb.Revision)), item("confirmed", boolean(rb.Confirmed)), item("staleLastApplied", boolean(rb.StaleLastApplied))}
	if rb.RepairSource != "" {
		fields = append(fields, item("repairSource", str(rb.RepairSource)))
	}
	if rb.RepairedLastApplied != "" {
		fields = append(fields, item("repairedLastApplied", str(rb.RepairedLastApplied)))
	}
	changes, err := factsValue(rb.Changes)
	if err != nil {
		return nil, err
	}
	fields = append(fields, item("changes", changes))
	if len(rb.LastAppliedUpdaters) > 0 {
		terms := make([]*ast.Term, len(rb.LastAppliedUpdaters))
		for i, m := range rb.LastAppliedUpdaters {
			terms[i] = ast.NewTerm(str(m))
		}
		fields = append(fields, item("lastAppliedUpdaters", ast.NewArray(terms...)))
	}
	return ast.NewObject(fields...), nil
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
		terms := make([]*ast.Term, len(x))
		for i, e := range x {
			v, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			terms[i] = ast.NewTerm(v)
		}
		return ast.NewArray(terms...), nil
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
