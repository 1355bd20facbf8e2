package apidocs

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// document is the part of the OpenAPI 3 document the pages show.
type document struct {
	Info struct {
		Title, Description, Version string
	}
	Tags       []struct{ Name, Description string }
	Paths      map[string]map[string]json.RawMessage
	Components struct {
		Parameters map[string]parameter
		Responses  map[string]response
		Schemas    map[string]schema
	}
	Problems []problemInfo `json:"x-ledgerlane-problems"`
	Warnings []warningInfo `json:"x-ledgerlane-warnings"`
}

type operation struct {
	OperationID string `json:"operationId"`
	Summary     string
	Description string
	Tags        []string
	Parameters  []parameter
	RequestBody *struct {
		Description string
		Content     map[string]media
	} `json:"requestBody"`
	Responses map[string]response
	Routes    []struct {
		Scope, Surface, Idempotency string
		BodyLimit                   int64 `json:"body_limit"`
	} `json:"x-ledgerlane-routes"`
}

type parameter struct {
	Ref         string `json:"$ref"`
	Name        string
	In          string
	Description string
	Required    bool
	Schema      schema
}

type response struct {
	Ref         string `json:"$ref"`
	Description string
	Content     map[string]media
}

// media is one content type of a body: its schema and the example the
// end-to-end suite recorded (docs/api.md, Examples).
type media struct {
	Schema  schema
	Example json.RawMessage
}

type schema struct {
	Ref         string `json:"$ref"`
	Type        string
	Format      string
	Description string
	Items       *schema
	Properties  map[string]schema
	Required    []string
	Enum        []any
}

type problemInfo struct {
	Type    string
	Status  int
	Title   string
	Meaning string
}

type warningInfo struct {
	Code, Family, Severity, Meaning string
	Lossy                           bool
}

// The pages' view of the document.

type reference struct {
	Title, Description string
	Groups             []group
	Schemas            []schemaView
}

type group struct {
	ID, Name, Description string
	Ops                   []opView
}

type opView struct {
	ID, Method, Path, Summary, Description string
	Scope, Surface, Idempotency            string
	Params                                 []paramView
	Body                                   *typed
	Responses                              []respView
	// BodyExample and AnswerExample are recorded exchanges, indented.
	BodyExample, AnswerExample, AnswerStatus string
	statuses                                 map[int]bool
}

type typed struct {
	Description, Type, Ref string
}

type paramView struct {
	typed
	Name, In string
	Required bool
}

type respView struct {
	typed
	Status string
}

type schemaView struct {
	Name, Description string
	Props             []propView
	Enum              string
}

type propView struct {
	typed
	Name     string
	Required bool
}

type problemPage struct {
	Problem    problemInfo
	Operations []opView
}

type warningFamily struct {
	Name  string
	Codes []warningInfo
}

func (d *document) reference() reference {
	ref := reference{Title: d.Info.Title, Description: d.Info.Description}
	byTag := map[string]*group{}
	var order []string
	for _, t := range d.Tags {
		byTag[t.Name] = &group{ID: anchor(t.Name), Name: tagTitle(t.Name), Description: t.Description}
		order = append(order, t.Name)
	}
	paths := make([]string, 0, len(d.Paths))
	for p := range d.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := d.Paths[path][method]
			if !ok {
				continue
			}
			var op operation
			if json.Unmarshal(raw, &op) != nil {
				continue
			}
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			g := byTag[tag]
			if g == nil {
				g = &group{ID: anchor(tag), Name: tagTitle(tag)}
				byTag[tag] = g
				order = append(order, tag)
			}
			g.Ops = append(g.Ops, d.opView(strings.ToUpper(method), path, op))
		}
	}
	for _, tag := range order {
		if g := byTag[tag]; len(g.Ops) > 0 {
			ref.Groups = append(ref.Groups, *g)
		}
	}
	names := make([]string, 0, len(d.Components.Schemas))
	for n := range d.Components.Schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := d.Components.Schemas[n]
		sv := schemaView{Name: n, Description: s.Description, Enum: enumText(s.Enum)}
		props := make([]string, 0, len(s.Properties))
		for p := range s.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		for _, p := range props {
			ps := s.Properties[p]
			sv.Props = append(sv.Props, propView{typed: typeOf(ps), Name: p, Required: contains(s.Required, p)})
		}
		ref.Schemas = append(ref.Schemas, sv)
	}
	return ref
}

func (d *document) opView(method, path string, op operation) opView {
	v := opView{ID: anchor(op.OperationID), Method: method, Path: path, Summary: op.Summary,
		Description: op.Description, statuses: map[int]bool{}}
	if v.ID == "" {
		v.ID = anchor(method + path)
	}
	if len(op.Routes) > 0 {
		v.Scope, v.Surface, v.Idempotency = op.Routes[0].Scope, op.Routes[0].Surface, op.Routes[0].Idempotency
	}
	for _, p := range op.Parameters {
		if p.Ref != "" {
			p = d.Components.Parameters[refName(p.Ref)]
		}
		pv := paramView{typed: typeOf(p.Schema), Name: p.Name, In: p.In, Required: p.Required}
		pv.Description = p.Description
		v.Params = append(v.Params, pv)
	}
	if rb := op.RequestBody; rb != nil {
		for _, c := range rb.Content {
			t := typeOf(c.Schema)
			t.Description = rb.Description
			v.Body = &t
			v.BodyExample = indented(c.Example)
			break
		}
	}
	codes := make([]string, 0, len(op.Responses))
	for c := range op.Responses {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, code := range codes {
		r := op.Responses[code]
		if r.Ref != "" {
			r = d.Components.Responses[refName(r.Ref)]
		}
		rv := respView{Status: code}
		rv.Description = r.Description
		for _, c := range r.Content {
			if c.Schema.Ref != "" {
				rv.Type, rv.Ref = refName(c.Schema.Ref), refName(c.Schema.Ref)
			}
			if ex := indented(c.Example); ex != "" && v.AnswerExample == "" {
				v.AnswerExample, v.AnswerStatus = ex, code
			}
			break
		}
		v.Responses = append(v.Responses, rv)
		if n, err := strconv.Atoi(code); err == nil {
			v.statuses[n] = true
		}
	}
	return v
}

// answering lists the operations that can answer status.
func (r reference) answering(status int) []opView {
	var out []opView
	for _, g := range r.Groups {
		for _, op := range g.Ops {
			if op.statuses[status] {
				out = append(out, op)
			}
		}
	}
	return out
}

func groupWarnings(ws []warningInfo) []warningFamily {
	var out []warningFamily
	for _, w := range ws {
		if len(out) == 0 || out[len(out)-1].Name != w.Family {
			out = append(out, warningFamily{Name: w.Family})
		}
		f := &out[len(out)-1]
		f.Codes = append(f.Codes, w)
	}
	return out
}

// typeOf says what a schema is in a few words, with the component it names.
func typeOf(s schema) typed {
	switch {
	case s.Ref != "":
		return typed{Type: refName(s.Ref), Ref: refName(s.Ref), Description: s.Description}
	case s.Type == "array" && s.Items != nil:
		t := typeOf(*s.Items)
		t.Type = "array of " + t.Type
		t.Description = s.Description
		return t
	}
	t := typed{Type: s.Type, Description: s.Description}
	if s.Format != "" {
		t.Type += " (" + s.Format + ")"
	}
	if e := enumText(s.Enum); e != "" {
		t.Type += ": " + e
	}
	if t.Type == "" {
		t.Type = "any"
	}
	return t
}

func enumText(vs []any) string {
	var parts []string
	for _, v := range vs {
		b, _ := json.Marshal(v)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ", ")
}

func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// tagTitle is a tag's heading: the generator writes them for readers
// (gateway/openapi/gen/tags.go).
func tagTitle(tag string) string { return tag }

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// indented is a JSON example laid out for reading; "" for none.
func indented(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Indent(&b, raw, "", "  ") != nil {
		return ""
	}
	return b.String()
}
