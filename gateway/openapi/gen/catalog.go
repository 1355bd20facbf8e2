package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
)

// The document also carries the two catalogues a client switches on, so
// the reference pages under /docs (gateway/apidocs) and any client can
// read them from the one served file: every problem type with its status,
// title and meaning (docs/errors.md), and every conversion warning code
// (docs/conversion-warnings.md, whose tables the converter's tests keep
// equal to the codes it emits).

// problemDoc is one entry of x-ledgerlane-problems.
type problemDoc struct {
	Type    string `json:"type"`
	Status  int    `json:"status"`
	Title   string `json:"title"`
	Meaning string `json:"meaning"`
}

// warningDoc is one entry of x-ledgerlane-warnings.
type warningDoc struct {
	Code     string `json:"code"`
	Family   string `json:"family"` // the section of docs/conversion-warnings.md
	Severity string `json:"severity"`
	Lossy    bool   `json:"lossy"`
	Meaning  string `json:"meaning"`
}

// problemCatalog joins pkg/problem's types with the meanings of
// docs/errors.md's table; a type without a row is an error, so a new slug
// cannot ship undocumented.
func problemCatalog(errorsMD string) ([]problemDoc, error) {
	meaning := map[string]string{}
	for _, line := range strings.Split(errorsMD, "\n") {
		cells := tableCells(line)
		if len(cells) == 3 && strings.HasPrefix(cells[0], "`") {
			meaning[strings.Trim(cells[0], "`")] = cells[2]
		}
	}
	var out []problemDoc
	for _, t := range problem.Types() {
		m, ok := meaning[string(t)]
		if !ok {
			return nil, fmt.Errorf("docs/errors.md has no row for the problem type %s", t)
		}
		out = append(out, problemDoc{Type: string(t), Status: t.Status(), Title: t.Title(), Meaning: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out, nil
}

// warningCatalog reads every "| Code | Severity | Lossy | … | Meaning |"
// table of docs/conversion-warnings.md, naming each code's family by the
// "## " section it is listed in.
func warningCatalog(warningsMD string) ([]warningDoc, error) {
	var out []warningDoc
	family := ""
	var cols map[string]int
	for _, line := range strings.Split(warningsMD, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			family, cols = strings.TrimSpace(h), nil
			continue
		}
		cells := tableCells(line)
		switch {
		case len(cells) == 0:
			cols = nil
		case len(cells) > 0 && cells[0] == "Code":
			cols = map[string]int{}
			for i, c := range cells {
				cols[c] = i
			}
		case cols != nil && !strings.HasPrefix(cells[0], "---"):
			get := func(name string) string {
				if i, ok := cols[name]; ok && i < len(cells) {
					return cells[i]
				}
				return ""
			}
			w := warningDoc{Code: get("Code"), Family: family, Severity: get("Severity"), Lossy: get("Lossy") == "yes", Meaning: get("Meaning")}
			if w.Code == "" || w.Severity == "" {
				return nil, fmt.Errorf("docs/conversion-warnings.md: a row without code or severity: %q", line)
			}
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("docs/conversion-warnings.md lists no warning code")
	}
	return out, nil
}

// tableCells splits a Markdown table row into its trimmed cells (escaped
// pipes kept), nil for a line that is not a row.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	line = strings.ReplaceAll(line[1:len(line)-1], `\|`, "\x00")
	var cells []string
	for _, c := range strings.Split(line, "|") {
		cells = append(cells, strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|"))
	}
	return cells
}
