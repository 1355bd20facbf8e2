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
	return cat
}
