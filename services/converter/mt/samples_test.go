package mt

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// sharedDir is /work/shared, found relative to this file so the tests run
// from any working directory.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir := sharedDirQuiet()
	if dir == "" {
		t.Skip("shared samples not found at ../../../../shared/samples/mt relative to this package (the shared folder sits beside the repository)")
	}
	return dir
}

func sharedDirQuiet() string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared")
	if _, err := os.Stat(filepath.Join(dir, "samples", "mt")); err != nil {
		return ""
	}
	return dir
}

func sampleFiles(t testing.TB) []string {
	dir := filepath.Join(sharedDir(t), "samples", "mt")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".yml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no MT samples")
	}
	return files
}

// TestSamplesParse: every sample parses, or fails with a ParseError that
// names the line and the field; and every parse renders back.
func TestSamplesParse(t *testing.T) {
	for _, f := range sampleFiles(t) {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		for _, profile := range []string{"plain", "german"} {
			t.Run(name+"/"+profile, func(t *testing.T) {
				in, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				opts := statement.Options{Field86Profile: profile}
				stmts, warns, err := Parse(in, opts)
				if err != nil {
					var pe *statement.ParseError
					if !errors.As(err, &pe) || pe.Line == 0 || pe.Field == "" {
						t.Fatalf("error does not name line and field: %v", err)
					}
					t.Logf("rejected: %v", err)
					return
				}
				for _, w := range warns {
					if _, ok := codes[w.Code]; !ok {
						t.Errorf("undocumented warning code %s", w.Code)
					}
				}
				if len(stmts) == 0 {
					t.Fatal("no statements")
				}
				typ := "940"
				if stmts[0].Kind == statement.KindReport {
					typ = "942"
				}
				if _, _, err := Render(typ, stmts, opts); err != nil {
					var pe *statement.ParseError
					if !errors.As(err, &pe) {
						t.Fatalf("render: %v", err)
					}
					t.Logf("not renderable: %v", err)
				}
			})
		}
	}
}

func timeMonth(b byte) time.Month { return time.Month(b) }
