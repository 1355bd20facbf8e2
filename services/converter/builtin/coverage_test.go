package builtin_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The coverage table of docs/conversion-formats.md (issue 29) is written
// from the engine's registry and the shared pairs by this test, so it cannot
// drift: TestCoverageTable fails when the committed table differs, and
// UPDATE_DOCS=1 (make gen) writes it. Timings are not part of it; they vary
// from run to run and live in docs/benchmarks.md.

const (
	coverageBegin = "<!-- coverage:begin (written by `make gen`: UPDATE_DOCS=1 go test -run TestCoverageTable ./builtin; do not edit) -->"
	coverageEnd   = "<!-- coverage:end -->"
)

// registryTable is one row per target: its versions and every source the
// engine converts to it (GET /v1/formats).
func registryTable(eng *engine.Engine) string {
	type target struct {
		versions []string
		from     []string
	}
	byTo := map[string]*target{}
	var order []string
	for _, f := range eng.Formats() {
		t := byTo[f.To]
		if t == nil {
			t = &target{versions: f.Versions}
			byTo[f.To] = t
			order = append(order, f.To)
		}
		t.from = append(t.from, f.From)
	}
	slices.SortFunc(order, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	var b strings.Builder
	b.WriteString("| Target | Versions written | Converts from |\n|---|---|---|\n")
	for _, to := range order {
		t := byTo[to]
		versions := "—"
		if len(t.versions) > 0 {
			versions = strings.Join(t.versions, ", ")
		}
		slices.SortFunc(t.from, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
		fmt.Fprintf(&b, "| %s | %s | %s |\n", to, versions, strings.Join(t.from, ", "))
	}
	return b.String()
}

// schemaCheck validates an MX page against the official schemas: a bare
// Document against its version's, an AppHdr and Document each against its
// own (the SWIFT envelope has no official schema). It answers "" when valid.
type schemaCheck struct{ bin, dir string }

func (s schemaCheck) check(t testing.TB, version, page string) string {
	parts := []struct{ elem, xsd string }{{"Document", version}}
	if strings.Contains(page, "<AppHdr ") {
		parts = append(parts, struct{ elem, xsd string }{"AppHdr", "head.001.001.02"})
	}
	for _, p := range parts {
		xsd := filepath.Join(s.dir, p.xsd+".xsd")
		if _, err := os.Stat(xsd); err != nil {
			return "no schema " + p.xsd
		}
		i, j := strings.Index(page, "<"+p.elem+" "), strings.LastIndex(page, "</"+p.elem+">")
		if i < 0 || j < i {
			return "no " + p.elem
		}
		f := filepath.Join(t.TempDir(), p.elem+".xml")
		doc := "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + page[i:j+len(p.elem)+3] + "\n"
		if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(s.bin, "--noout", "--schema", xsd, f).CombinedOutput(); err != nil {
			return p.xsd + ": " + strings.TrimSpace(string(out))
		}
	}
	return ""
}

// pairsTable converts every shared pair input to its expectation's type and
// counts, per family, the cases that convert and the ones that also pass:
// every page of an MX target schema-valid, every page of an MT target valid
// by engine.Validate (what POST /v1/validate answers).
func pairsTable(t testing.TB, eng *engine.Engine, cases []pairCase, schemas schemaCheck) string {
	type family struct {
		cases, converted, passed int
		versions                 []string
	}
	fams := map[string]*family{}
	for _, c := range cases {
		name := c.from + " → " + c.to
		if c.from == "" || c.to == "" {
			name = "undetected"
		}
		f := fams[name]
		if f == nil {
			f = &family{}
			fams[name] = f
		}
		f.cases++
		if name == "undetected" {
			t.Logf("%s: input or expectation not detected", c.name)
			continue
		}
		res, err := eng.Convert(engine.Request{Input: c.input, To: c.to})
		if err != nil {
			t.Logf("%s: %v", c.name, err)
			continue
		}
		f.converted++
		if res.TargetVersion != "" && !slices.Contains(f.versions, res.TargetVersion) {
			f.versions = append(f.versions, res.TargetVersion)
		}
		ok := true
		for _, page := range res.Pages {
			why := ""
			if res.TargetVersion != "" {
				why = schemas.check(t, res.TargetVersion, page)
			} else if v, err := eng.Validate([]byte(page), res.TargetType, statement.Options{}); err != nil {
				why = err.Error()
			} else if !v.Valid {
				why = fmt.Sprintf("%d validation errors, first %s", len(v.Errors), v.Errors[0].Message)
			}
			if why != "" {
				t.Logf("%s: %s", c.name, why)
				ok = false
				break
			}
		}
		if ok {
			f.passed++
		}
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	// Families by name, the undetected last.
	slices.SortFunc(names, func(a, b string) int {
		if (a == "undetected") != (b == "undetected") {
			if a == "undetected" {
				return 1
			}
			return -1
		}
		return strings.Compare(strings.ToLower(a), strings.ToLower(b))
	})
	var b strings.Builder
	b.WriteString("| Family | Version written | Shared cases | Convert | Pass |\n|---|---|---|---|---|\n")
	var total family
	for _, n := range names {
		f := fams[n]
		total.cases += f.cases
		total.converted += f.converted
		total.passed += f.passed
		versions := "—"
		if len(f.versions) > 0 {
			slices.Sort(f.versions)
			versions = strings.Join(f.versions, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", n, versions, f.cases, f.converted, f.passed)
	}
	fmt.Fprintf(&b, "| **all** | | %d | %d | %d |\n", total.cases, total.converted, total.passed)
	return b.String()
}

// coverageDoc is the text between the markers.
func coverageDoc(t testing.TB) string {
	dir := sharedDir(t)
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		// The Pass column would read 0 for every MX family: not a table to
		// compare against the committed one.
		t.Skip("xmllint not installed (apt-get install -y libxml2-utils): the coverage table needs schema validation")
	}
	xsd := filepath.Join(dir, "iso20022", "xsd")
	if _, err := os.Stat(xsd); err != nil {
		t.Skipf("official schemas not found at %s", xsd)
	}
	eng := builtin.Engine()
	return "\n" +
		"Every pair the engine converts, from its registry (`GET /v1/formats` answers the same):\n\n" +
		registryTable(eng) + "\n" +
		"The shared CBPR+ pairs (`../shared/samples/pairs`), grouped by the detected type of the input and of the\n" +
		"expected output. Convert: `engine.Convert` to the expectation's type without an error. Pass: besides, every\n" +
		"page of an MX result is valid against the official schema of the version written (its `AppHdr` against\n" +
		"head.001.001.02), every page of an MT result valid by `POST /v1/validate`. `go test -v -run TestCoverageTable\n" +
		"./builtin` logs each case that does not convert or pass, with the reason.\n\n" +
		pairsTable(t, eng, sharedPairs(t, dir), schemaCheck{bin, xsd}) + "\n"
}

// TestCoverageTable: the coverage table of docs/conversion-formats.md is the
// one the registry and the shared pairs give today. UPDATE_DOCS=1 writes it.
func TestCoverageTable(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and validates every shared pair")
	}
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "conversion-formats.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("docs not found: %v", err)
	}
	text := string(doc)
	i, j := strings.Index(text, coverageBegin), strings.Index(text, coverageEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/conversion-formats.md has no coverage markers (%q … %q)", coverageBegin, coverageEnd)
	}
	want := coverageDoc(t)
	got := text[i+len(coverageBegin) : j]
	if got == want {
		return
	}
	if os.Getenv("UPDATE_DOCS") != "" {
		text = text[:i+len(coverageBegin)] + want + text[j:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("docs/conversion-formats.md: coverage table written")
		return
	}
	t.Errorf("docs/conversion-formats.md: the coverage table is stale; run make gen (UPDATE_DOCS=1 go test -run TestCoverageTable ./builtin)\n--- want ---\n%s", want)
}
