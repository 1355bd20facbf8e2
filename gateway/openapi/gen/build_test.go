package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The served document is what `make gen` writes from the committed swagger,
// the route table and the problem types: a route, scope or slug added
// without regenerating fails here, in `make test`, not only in gen-check.
func TestDocumentIsCurrent(t *testing.T) {
	swagger, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "openapi", "api.swagger.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(swagger, readCatalogs(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("gateway/openapi/openapi.json is stale: run make gen")
	}
}

func readCatalogs(t *testing.T) Catalogs {
	t.Helper()
	var cat Catalogs
	for _, f := range []struct {
		name string
		dst  *string
	}{{"errors.md", &cat.ErrorsMD}, {"conversion-warnings.md", &cat.WarningsMD}} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", f.name))
		if err != nil {
			t.Fatal(err)
		}
		*f.dst = string(b)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "openapi", "examples.json"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	cat.Examples = b
	return cat
}

// TestExamples: a recorded exchange becomes its operation's request and
// answer examples; one naming an operation or a status the document lacks
// fails the build (the file is stale).
func TestExamples(t *testing.T) {
	swagger, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "openapi", "api.swagger.json"))
	if err != nil {
		t.Fatal(err)
	}
	cat := readCatalogs(t)
	cat.Examples = []byte(`{"POST /v1/validate": {"request": {"message": "MT-EXAMPLE"}, "status": 200, "response": {"valid": true, "detected_type": "MT940", "detected_version": "", "errors": [], "warnings": []}}}`)
	doc, err := Build(swagger, cat)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte(`"MT-EXAMPLE"`)) {
		t.Fatal("the request example is not in the document")
	}
	for _, stale := range []string{
		`{"POST /v1/nowhere": {"status": 200, "response": {}}}`,
		`{"POST /v1/validate": {"status": 299, "response": {}}}`,
		`{"POST /v1/validate": `,
	} {
		cat.Examples = []byte(stale)
		if _, err := Build(swagger, cat); err == nil {
			t.Errorf("%s: built", stale)
		}
	}
}
