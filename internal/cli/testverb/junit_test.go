package testverb

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// xsdElement is a global element of the JUnit schema, as far as
// checkJUnit understands XSD: a sequence of element references, attributes,
// and whether it has text (simple content).
type xsdElement struct {
	Name    string `xml:"name,attr"`
	Complex struct {
		Sequence struct {
			Elements []xsdParticle `xml:"element"`
		} `xml:"sequence"`
		Attributes    []xsdAttribute `xml:"attribute"`
		SimpleContent *struct {
			Extension struct {
				Base       string         `xml:"base,attr"`
				Attributes []xsdAttribute `xml:"attribute"`
			} `xml:"extension"`
		} `xml:"simpleContent"`
	} `xml:"complexType"`
}

type xsdParticle struct {
	Ref       string `xml:"ref,attr"`
	MinOccurs string `xml:"minOccurs,attr"`
	MaxOccurs string `xml:"maxOccurs,attr"`
}

type xsdAttribute struct {
	Name string `xml:"name,attr"`
	Type string `xml:"type,attr"`
	Use  string `xml:"use,attr"`
}

func (e *xsdElement) attributes() []xsdAttribute {
	if e.Complex.SimpleContent != nil {
		return e.Complex.SimpleContent.Extension.Attributes
	}
	return e.Complex.Attributes
}

func (p xsdParticle) bounds() (lo, hi int) {
	lo, hi = 1, 1
	if p.MinOccurs != "" {
		lo, _ = strconv.Atoi(p.MinOccurs)
	}
	switch p.MaxOccurs {
	case "":
	case "unbounded":
		hi = -1
	default:
		hi, _ = strconv.Atoi(p.MaxOccurs)
	}
	return lo, hi
}

// loadXSD reads the global elements of the schema.
func loadXSD(t *testing.T, path string) map[string]*xsdElement {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		XMLName  xml.Name     `xml:"http://www.w3.org/2001/XMLSchema schema"`
		Elements []xsdElement `xml:"element"`
	}
	if err := xml.Unmarshal(data, &schema); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	out := map[string]*xsdElement{}
	for i := range schema.Elements {
		out[schema.Elements[i].Name] = &schema.Elements[i]
	}
	return out
}

// xmlNode is an element of the checked document.
type xmlNode struct {
	name     string
	attrs    []xml.Attr
	children []*xmlNode
	text     string
}

func parseXML(data []byte) (*xmlNode, error) {
	dec := xml.NewDecoder(strings.NewReader(string(data)))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: tok.Name.Local, attrs: tok.Attr}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("more than one root element")
				}
				root = n
			} else {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tok)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// checkJUnit validates n against the schema's declaration of its element:
// the attributes (required ones present, no undeclared one, values of
// their type), the children (declared, in the sequence's order, within
// minOccurs and maxOccurs) and text only where the content is simple.
func checkJUnit(schema map[string]*xsdElement, n *xmlNode, at string) []error {
	at += "/" + n.name
	decl, ok := schema[n.name]
	if !ok {
		return []error{fmt.Errorf("%s: element not declared by the schema", at)}
	}
	var errs []error
	declared := map[string]xsdAttribute{}
	for _, a := range decl.attributes() {
		declared[a.Name] = a
	}
	seen := map[string]bool{}
	for _, a := range n.attrs {
		if a.Name.Space != "" {
			continue
		}
		seen[a.Name.Local] = true
		d, ok := declared[a.Name.Local]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: attribute %q not declared", at, a.Name.Local))
			continue
		}
		if err := checkType(d.Type, a.Value); err != nil {
			errs = append(errs, fmt.Errorf("%s/@%s: %w", at, a.Name.Local, err))
		}
	}
	for _, d := range decl.attributes() {
		if d.Use == "required" && !seen[d.Name] {
			errs = append(errs, fmt.Errorf("%s: required attribute %q missing", at, d.Name))
		}
	}
	if decl.Complex.SimpleContent == nil && strings.TrimSpace(n.text) != "" {
		errs = append(errs, fmt.Errorf("%s: text %q in an element with element-only content", at, strings.TrimSpace(n.text)))
	}
	if decl.Complex.SimpleContent != nil && len(n.children) > 0 {
		errs = append(errs, fmt.Errorf("%s: child elements in an element with simple content", at))
	}
	// The sequence: each particle in turn takes the children of its name.
	i := 0
	for _, p := range decl.Complex.Sequence.Elements {
		lo, hi := p.bounds()
		count := 0
		for i < len(n.children) && n.children[i].name == p.Ref {
			count++
			i++
		}
		if count < lo || hi >= 0 && count > hi {
			errs = append(errs, fmt.Errorf("%s: %d <%s> elements, want %s to %s", at, count, p.Ref, p.MinOccurs, p.MaxOccurs))
		}
	}
	if i < len(n.children) {
		errs = append(errs, fmt.Errorf("%s: unexpected <%s> (not allowed here by the sequence)", at, n.children[i].name))
	}
	for _, c := range n.children {
		errs = append(errs, checkJUnit(schema, c, at)...)
	}
	return errs
}

func checkType(typ, v string) error {
	var err error
	switch typ {
	case "xs:string":
	case "xs:int":
		_, err = strconv.ParseInt(v, 10, 32)
	case "xs:decimal":
		if strings.ContainsAny(v, "eE") {
			err = errors.New("exponent")
		} else {
			_, err = strconv.ParseFloat(v, 64)
		}
	case "xs:dateTime":
		_, err = time.Parse("2006-01-02T15:04:05Z07:00", v)
	default:
		err = fmt.Errorf("type %s unknown to the checker", typ)
	}
	if err != nil {
		return fmt.Errorf("%q is not an %s: %w", v, typ, err)
	}
	return nil
}

func validateJUnit(t *testing.T, report string) *xmlNode {
	t.Helper()
	schema := loadXSD(t, "testdata/junit/junit.xsd")
	root, err := parseXML([]byte(report))
	if err != nil {
		t.Fatalf("the report is not XML: %v\n%s", err, report)
	}
	if root.name != "testsuites" {
		t.Errorf("root element <%s>, want <testsuites>", root.name)
	}
	for _, err := range checkJUnit(schema, root, "") {
		t.Error(err)
	}
	return root
}

func attr(n *xmlNode, name string) string {
	for _, a := range n.attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// The checker itself rejects what the schema forbids.
func TestJUnitCheckerRejects(t *testing.T) {
	schema := loadXSD(t, "testdata/junit/junit.xsd")
	for doc, want := range map[string]string{
		`<testsuites><testsuite tests="1"/></testsuites>`:                                                      `required attribute "name" missing`,
		`<testsuites><testsuite name="a" tests="x"/></testsuites>`:                                             `"x" is not an xs:int`,
		`<testsuites><testsuite name="a" tests="1" color="red"/></testsuites>`:                                 `attribute "color" not declared`,
		`<testsuites><testcase name="a"/></testsuites>`:                                                        "unexpected <testcase>",
		`<testsuites><testsuite name="a" tests="1"><testcase/></testsuite></testsuites>`:                       `required attribute "name" missing`,
		`<testsuites><testsuite name="a" tests="1"><system-out/><testcase name="b"/></testsuite></testsuites>`: "unexpected <testcase>",
		`<testsuites><testsuite name="a" tests="1">text</testsuite></testsuites>`:                              "element-only content",
		`<testsuites><testsuite name="a" tests="1" time="1e3"/></testsuites>`:                                  "is not an xs:decimal",
	} {
		root, err := parseXML([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		errs := checkJUnit(schema, root, "")
		if len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), want) {
			t.Errorf("%s: errors %v, want one saying %q", doc, errs, want)
		}
	}
}

// -o junit reports the examples, all passing, as a valid JUnit document.
func TestTestJUnitPasses(t *testing.T) {
	stdout, stderr, code := run(t, examples, "-o", "junit")
	if code != cli.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	root := validateJUnit(t, stdout)
	if len(root.children) < 2 {
		t.Fatalf("%d test suites, want one per example file:\n%s", len(root.children), stdout)
	}
	total := 0
	for _, s := range root.children {
		if !strings.HasSuffix(attr(s, "name"), "_test.yaml") {
			t.Errorf("test suite %q is not named after its file", attr(s, "name"))
		}
		if got := attr(s, "tests"); got != strconv.Itoa(len(s.children)) {
			t.Errorf("suite %s: tests=%s, but %d test cases", attr(s, "name"), got, len(s.children))
		}
		total += len(s.children)
	}
	if attr(root, "tests") != strconv.Itoa(total) || attr(root, "failures") != "0" {
		t.Errorf("testsuites tests=%s failures=%s, want %d and 0", attr(root, "tests"), attr(root, "failures"), total)
	}
}

// A failing case is a <failure> with the diff, and the exit status stays 1.
func TestTestJUnitFailure(t *testing.T) {
	dir := copyDir(t, filepath.Join(examples, "no-edit-in-prod"))
	file := filepath.Join(dir, "no-edit-in-prod_test.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old := "      - rule: no-edit-in-prod\n        action: deny\n        message:"
	if !strings.Contains(string(data), old) {
		t.Fatalf("the example no longer has %q", old)
	}
	changed := strings.Replace(string(data), old, strings.Replace(old, "deny", "warn", 1), 1)
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, dir, "-o", "junit")
	if code != cli.ExitFailure || stderr != "error: 1 of 6 test cases failed\n" {
		t.Errorf("exit %d, stderr %q; want 1 and the count", code, stderr)
	}
	root := validateJUnit(t, stdout)
	if attr(root, "tests") != "6" || attr(root, "failures") != "1" {
		t.Errorf("testsuites tests=%s failures=%s, want 6 and 1", attr(root, "tests"), attr(root, "failures"))
	}
	var failures []*xmlNode
	for _, s := range root.children {
		for _, c := range s.children {
			for _, f := range c.children {
				if f.name == "failure" {
					failures = append(failures, f)
				}
			}
		}
	}
	if len(failures) != 1 {
		t.Fatalf("%d <failure> elements, want 1:\n%s", len(failures), stdout)
	}
	if f := failures[0]; attr(f, "message") != "decisions mismatch (-want +got)" || !strings.Contains(f.text, `Action: "deny",`) {
		t.Errorf("failure message %q, text:\n%s\nwant the diff of the decisions", attr(f, "message"), f.text)
	}
}

func TestTestRejectsUnknownOutput(t *testing.T) {
	_, stderr, code := run(t, examples, "-o", "xml")
	if code != cli.ExitBadInput || !strings.Contains(stderr, `--output must be "junit" (or empty for text), not "xml"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
