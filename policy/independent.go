package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// independent checks that the patches of the decisions among ds that
// write are independent of one another: each is written against the
// object as the request has it, so no write of one decision may touch a
// field that a write of another touches, encloses or is inside of, nor
// an element of a list whose elements another addresses (whether a
// pointer's parent is a list is read from obj: a ConfigMap's data may
// have a key "0"), or the one would move or replace what the other
// addresses. Removals by several decisions are exempt: Combine orders
// them from the end of the object backwards and makes a shared one once.
// A test changes nothing and runs before every write.
func independent(obj map[string]any, ds []Decision) error {
	type write struct {
		rule RuleID
		op   PatchOperation
		d    int
	}
	var ws []write
	for i, d := range ds {
		if !writes(d.Action) {
			continue
		}
		for _, op := range d.Patch {
			if op.Op != OpTest {
				ws = append(ws, write{rule: d.Rule, op: op, d: i})
			}
		}
	}
	for i, a := range ws {
		for _, b := range ws[i+1:] {
			if a.d == b.d || (a.op.Op == OpRemove && b.op.Op == OpRemove) {
				continue
			}
			if how := overlap(obj, a.op.Path, b.op.Path); how != "" {
				return fmt.Errorf("rule %s's %s of %s and rule %s's %s of %s %s: each decision's patch is written against the object as the request has it, so the one would change what the other addresses",
					a.rule, a.op.Op, a.op.Path, b.rule, b.op.Op, b.op.Path, how)
			}
		}
	}
	return nil
}

// overlap says how the fields at pointers p and q of obj overlap: the
// same field, one inside the other, or elements of one list; "" when
// they are apart.
func overlap(obj map[string]any, p, q string) string {
	x, y := strings.Split(p, "/")[1:], strings.Split(q, "/")[1:]
	k := 0
	for k < len(x) && k < len(y) && x[k] == y[k] {
		k++
	}
	switch {
	case k == len(x) && k == len(y):
		return "touch the same field"
	case k == len(x) || k == len(y):
		return "touch a field and one inside it"
	}
	if _, isList := at(obj, x[:k]).([]any); isList {
		return "address elements of one list, /" + strings.Join(x[:k], "/")
	}
	return ""
}

// unescapeToken turns a pointer's token back into the key it names (RFC
// 6901: "~1" is "/", "~0" is "~").
var unescapeToken = strings.NewReplacer("~1", "/", "~0", "~")

// at returns the value of obj at the pointer tokens ts, nil when it has
// none.
func at(obj map[string]any, ts []string) any {
	var cur any = obj
	for _, t := range ts {
		t = unescapeToken.Replace(t)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}
