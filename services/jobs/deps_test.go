package jobs_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The root is plain Go (docs/architecture.md): transports, the queue client
// and metrics live in adapters.
func TestRootDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"google.golang.org/grpc", "github.com/nats-io/", "net/http", "github.com/prometheus/", "google.golang.org/protobuf"} {
			if dep == banned || strings.HasPrefix(dep, strings.TrimSuffix(banned, "/")+"/") {
				t.Errorf("the root package depends on %s", dep)
			}
		}
	}
}
