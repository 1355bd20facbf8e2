package mx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// TestSamples: every MX sample either parses and renders to a schema-valid
// camt document of both versions, or fails with a ParseError.
func TestSamples(t *testing.T) {
	for _, path := range mxSamples(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			typ, version, ok := Detect(data)
			if !ok {
				// Not a camt.052/053 document: asked for as camt.053 anyway,
				// the parser must refuse it with a ParseError.
				_, _, err := Parse(data, typeCamt3, statement.Options{})
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("undetected sample: want ParseError, got %v", err)
				}
				return
			}
			stmts, _, err := Parse(data, typ, statement.Options{})
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("want ParseError, got %T %v", err, err)
				}
				if !invalidOnPurpose(path) {
					t.Fatalf("%s: %v", version, err)
				}
				return
			}
			if invalidOnPurpose(path) {
				t.Logf("invalid-on-purpose sample parsed (%d statements)", len(stmts))
			}
			for _, v := range []string{typ + ".001.02", typ + ".001.08"} {
				doc, _, err := Render(stmts, typ, v)
				if err != nil {
					t.Fatalf("render %s: %v", v, err)
				}
				xmllint(t, v, doc)
				back, _, err := Parse([]byte(doc), typ, statement.Options{})
				if err != nil {
					t.Fatalf("reparse %s: %v", v, err)
				}
				assertSame(t, stmts, back)
			}
		})
	}
}
