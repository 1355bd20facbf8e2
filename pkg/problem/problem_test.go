package problem

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryTypeIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "errors.md"))
	if err != nil {
		t.Skipf("docs/errors.md not found: %v", err)
	}
	for _, typ := range Types() {
		if !strings.Contains(string(doc), "| `"+string(typ)+"` |") {
			t.Errorf("docs/errors.md does not list %q", typ)
		}
	}
}

func TestNew(t *testing.T) {
	p := New(RateLimited, "slow down").WithField("f").WithRetryAfter(3)
	want := Problem{Type: RateLimited, Title: "Rate limited", Status: 429, Detail: "slow down", Field: "f", RetryAfter: 3}
	if *p != want {
		t.Fatalf("got %+v, want %+v", *p, want)
	}
	var got *Problem
	if !errors.As(fmt.Errorf("wrapped: %w", p), &got) || got != p {
		t.Fatal("a wrapped problem must be found with errors.As")
	}
	if p.Error() != "rate-limited: slow down" {
		t.Fatalf("Error() = %q", p.Error())
	}
	if Type("nope").Status() != 500 || Type("nope").Known() {
		t.Fatal("unknown types are internal")
	}
}

// The package is plain Go: service roots import it, and must stay free of
// transports (docs/architecture.md).
func TestPlainGo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	// Standard packages only, and not the HTTP stack.
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/ledgerlane/platform/pkg/problem" {
			t.Errorf("package problem depends on %s", dep)
		}
	}
	out, err = exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net/http" {
			t.Error("package problem depends on net/http")
		}
	}
}
