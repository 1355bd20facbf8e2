package k8s

import (
	"maps"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// secretName matches the environment variables that carry credentials: a
// data store's URL (its password), a key, a secret, a password or a token.
var secretName = regexp.MustCompile(`^(DATABASE_URL|REDIS_URL|NATS_URL)$|_(SECRET|KEY|PASSWORD|TOKEN)$`)

// TestNoSecretInlined: in every overlay and example, a variable that carries
// a credential is read from a Secret by reference, never written into a
// manifest as a value (where kubectl get deployment -o yaml shows it).
func TestNoSecretInlined(t *testing.T) {
	check := func(t *testing.T, ws []workload) {
		for _, w := range ws {
			for _, c := range containers(w.spec) {
				for _, ev := range c.Env {
					if !secretName.MatchString(ev.Name) {
						continue
					}
					if ev.ValueFrom == nil || ev.ValueFrom.SecretKeyRef == nil {
						t.Errorf("%s container %s: %s is not read from a Secret (secretKeyRef)", w, c.Name, ev.Name)
					}
				}
			}
		}
	}
	forEachOverlay(t, func(t *testing.T, b *build, _ expectation) { check(t, b.workloads()) })
	t.Run("examples", func(t *testing.T) { check(t, workloadsOf(decodeFile(t, jobExample))) })
}

// envRef returns the reference of the container's variable name, if any.
func envRef(spec *corev1.PodSpec, container, name string) *corev1.EnvVarSource {
	for _, c := range spec.Containers {
		if c.Name != container {
			continue
		}
		for _, ev := range c.Env {
			if ev.Name == name {
				return ev.ValueFrom
			}
		}
	}
	return nil
}

// TestServiceSettings: metering's PAYMENT_PROCESSOR and jobs' accounting
// platforms come from the Secret ledgerlane-secrets; the platforms are
// optional (a platform without its client id is not offered), and in dev
// the processor is the sandbox.
func TestServiceSettings(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, b *build, e expectation) {
		secretRef := func(binary, name string, optional bool) string {
			t.Helper()
			w, ok := b.workload(binary)
			if !ok {
				t.Fatalf("no %s workload", binary)
			}
			ref := envRef(w.spec, binary, name)
			if ref == nil || ref.SecretKeyRef == nil {
				t.Errorf("%s: %s is not read from a Secret", binary, name)
				return ""
			}
			r := ref.SecretKeyRef
			if !strings.HasPrefix(r.Name, "ledgerlane-secrets") || r.Key != name {
				t.Errorf("%s: %s reads %s/%s, want ledgerlane-secrets/%s", binary, name, r.Name, r.Key, name)
			}
			if ptrValue(r.Optional) != optional {
				t.Errorf("%s: %s optional=%v, want %v", binary, name, ptrValue(r.Optional), optional)
			}
			return r.Name
		}
		secret := secretRef("metering", "PAYMENT_PROCESSOR", true)
		for _, k := range []string{"ACCOUNTING_REDIRECT_URL", "QUICKBOOKS_CLIENT_ID", "QUICKBOOKS_CLIENT_SECRET", "XERO_CLIENT_ID", "XERO_CLIENT_SECRET"} {
			secretRef("jobs", k, true)
		}
		secretRef("jobs", "CURSOR_SECRET", false)
		if e.inCluster {
			s := find[*corev1.Secret](b, secret)
			if s == nil || string(s.Data["PAYMENT_PROCESSOR"]) != "sandbox" {
				t.Errorf("dev: metering's PAYMENT_PROCESSOR is not sandbox in Secret %s", secret)
			}
		}
	})
}

// TestAccountingEgress: jobs reaches the accounting platforms (QuickBooks,
// Xero: public addresses) over HTTPS, and no other binary reaches the
// internet; only the gateway is reachable from outside the namespace.
// TestNetworkPolicies checks every flow; this names the ones the accounting
// connections and the edge depend on, so a change to them fails here by name.
func TestAccountingEgress(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, b *build, _ expectation) {
		n := policies{list: all[*networkingv1.NetworkPolicy](b)}
		ns := find[*corev1.Namespace](b, namespace)
		nsLabels := maps.Clone(ns.Labels)
		nsLabels["kubernetes.io/metadata.name"] = namespace
		platform := endpoint{name: "accounting-platform", addr: netip.MustParseAddr("203.0.113.20"),
			ports: []corev1.ContainerPort{{ContainerPort: 443, Protocol: corev1.ProtocolTCP}}}
		private := endpoint{name: "private", addr: netip.MustParseAddr("10.1.2.3"), ports: platform.ports}
		internet := endpoint{name: "internet", addr: netip.MustParseAddr("198.51.100.7")}
		for _, w := range b.workloads() {
			name := w.labels[nameLabel]
			src := endpoint{name: name, ns: namespace, nsLabels: nsLabels, labels: w.labels}
			if got := n.allows(src, platform, 443, corev1.ProtocolTCP); got != (name == "jobs") {
				t.Errorf("%s -> public address:443 allowed=%v, want %v", name, got, name == "jobs")
			}
			if n.allows(src, private, 443, corev1.ProtocolTCP) {
				t.Errorf("%s -> private address:443 allowed", name)
			}
			for _, c := range w.spec.Containers {
				for _, p := range c.Ports {
					dst := src
					dst.ports = c.Ports
					if got := n.allows(internet, dst, p.ContainerPort, corev1.ProtocolTCP); got != (name == "gateway" && p.ContainerPort == 8080) {
						t.Errorf("internet -> %s:%d allowed=%v", name, p.ContainerPort, got)
					}
				}
			}
		}
	})
}

// TestPortalPublicURL: every overlay gives the gateway its public URL (the
// gateway refuses to start without one: the portal's mailed links start
// with it), an absolute root; in prod over https.
func TestPortalPublicURL(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, b *build, e expectation) {
		cm := find[*corev1.ConfigMap](b, "ledgerlane-config")
		if cm == nil {
			t.Fatal("no ConfigMap ledgerlane-config")
		}
		v := cm.Data["PORTAL_PUBLIC_URL"]
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || strings.Trim(u.Path, "/") != "" || (u.Scheme != "https" && (e.managed || u.Scheme != "http")) {
			t.Errorf("PORTAL_PUBLIC_URL %q: want an absolute root URL (https in a managed overlay)", v)
		}
		w, ok := b.workload("gateway")
		if !ok {
			t.Fatal("no gateway workload")
		}
		reads := false
		for _, c := range containers(w.spec) {
			for _, ef := range c.EnvFrom {
				reads = reads || (ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == cm.Name)
			}
		}
		if !reads {
			t.Errorf("the gateway does not read %s", cm.Name)
		}
	})
}
