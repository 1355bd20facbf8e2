package local_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServiceRootsArePlainGo keeps docs/architecture.md true: each service's
// root package (domain types, the Store, the Service) and each subdomain
// package builds without a transport, a queue client, a database or Redis
// driver, or metrics, which live in adapters; and the gateway needs only
// what metering publishes for the edge, not the service.
func TestServiceRootsArePlainGo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	banned := []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/nats-io", "net/http", "github.com/prometheus"}
	// The drivers: a root or subdomain reaches PostgreSQL and Redis through
	// its Store, whose adapter maps the driver's errors (pkg/pg.Error).
	drivers := []string{"github.com/jackc/pgx", "github.com/redis/go-redis"}
	forbid := func(root string, lists ...[]string) {
		pkg := "github.com/ledgerlane/platform/services/" + root
		out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, list := range lists {
				for _, b := range list {
					if dep == b || strings.HasPrefix(dep, b+"/") {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		}
	}
	// Every subdomain package joins this list when it is made.
	for _, root := range []string{"jobs", "jobs/accounting", "converter", "finance", "finance/debt", "finance/insights",
		"finance/imports", "finance/networth", "finance/recurring", "finance/budgets", "finance/banksync", "finance/sandboxlink"} {
		forbid(root, banned, drivers)
	}
	// Finance's subdomains import the kernel, and between themselves only
	// budgets → recurring (docs/architecture.md, services/finance/README.md).
	subdomains := []string{"finance/debt", "finance/insights", "finance/imports", "finance/networth", "finance/recurring",
		"finance/budgets", "finance/banksync", "finance/sandboxlink"}
	for _, root := range append([]string{"finance"}, subdomains...) {
		var others []string
		for _, sub := range subdomains {
			if sub != root && !(root == "finance/budgets" && sub == "finance/recurring") {
				others = append(others, "github.com/ledgerlane/platform/services/"+sub)
			}
		}
		forbid(root, others)
	}
	// Metering's root and its subdomains reach the usage counters and the
	// throttles through ports (admission/quota holds the plain values they
	// share with admission, the Redis adapter), so no go-redis either, not
	// even through admission: -deps lists what they reach transitively.
	// Calls run billing → root → notify and identity → root: neither the
	// root nor notify imports billing or identity.
	for _, root := range []string{"metering", "metering/notify", "metering/identity", "metering/billing"} {
		forbid(root, banned, drivers)
	}
	meteringSubdomains := []string{"github.com/ledgerlane/platform/services/metering/billing",
		"github.com/ledgerlane/platform/services/metering/identity"}
	forbid("metering", meteringSubdomains)
	forbid("metering/notify", meteringSubdomains)
	out, err := exec.Command(goTool, "list", "-deps", "github.com/ledgerlane/platform/gateway/...").Output()
	if err != nil {
		t.Fatalf("go list gateway: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/ledgerlane/platform/services/") &&
			!strings.HasPrefix(dep, "github.com/ledgerlane/platform/services/metering/admission") {
			t.Errorf("the gateway depends on %s", dep)
		}
	}
}
