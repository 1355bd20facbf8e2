package k8s

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// binaries are the five Ledgerlane binaries and the port each serves on: the
// gateway HTTP (probed on /v1/ready and /v1/health), the services gRPC
// (probed with grpc.health.v1).
var binaries = map[string]int32{
	"gateway":   8080,
	"finance":   9001,
	"converter": 9002,
	"metering":  9003,
	"jobs":      9004,
}

// expectation says what an overlay is. Every directory under overlays/ must
// be listed, so a new overlay is a decision, not an accident.
type expectation struct {
	// inCluster: the overlay runs PostgreSQL, Redis and NATS itself.
	inCluster bool
	// managed: PostgreSQL, Redis and NATS are managed services, referenced
	// by the Secret ledgerlane-secrets (created outside the repository) and
	// reached through ipBlock egress rules.
	managed bool
	// autoscaled: an HPA (minimum 2) and a PDB for each binary.
	autoscaled bool
}

var expectations = map[string]expectation{
	"dev":  {inCluster: true},
	"prod": {managed: true, autoscaled: true},
}

// The examples are not part of any overlay, but are checked like them.
const (
	secretExample = "examples/secret.example.yaml"
	jobExample    = "examples/meteringctl-job.example.yaml"
)

func forEachOverlay(t *testing.T, check func(t *testing.T, b *build, e expectation)) {
	for _, name := range overlayNames(t) {
		t.Run(name, func(t *testing.T) {
			e, ok := expectations[name]
			if !ok {
				t.Fatalf("overlays/%s is not in expectations (manifests_test.go): say what it is", name)
			}
			check(t, render(t, name), e)
		})
	}
}

func TestOverlaysAreDevAndProd(t *testing.T) {
	names := overlayNames(t)
	for want := range expectations {
		if !slices.Contains(names, want) {
			t.Errorf("overlays/%s is missing", want)
		}
	}
}

// TestStrictDecoding proves that the decoder the other tests rely on refuses
// what a typo produces: an unknown field, a duplicated field, a bad quantity
// and an unknown kind.
func TestStrictDecoding(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  selector:
    matchLabels: {app: x}
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
        - name: x
          image: x:1.0.0
`
	if _, err := decode([]byte(deployment)); err != nil {
		t.Fatalf("a valid Deployment: %v", err)
	}
	for name, doc := range map[string]string{
		"unknown field": deployment + "          readinesProbe: {}\n",
		"duplicate field": strings.Replace(deployment, "          image: x:1.0.0\n",
			"          image: x:1.0.0\n          image: x:1.0.1\n", 1),
		"bad quantity": deployment + "          resources:\n            limits:\n              memory: lots\n",
		"unknown kind": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: x\n",
	} {
		if _, err := decode([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestObjects(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, b *build, _ expectation) {
		seen := map[string]bool{}
		for _, o := range b.objects {
			key := o.kind + "/" + o.name
			if seen[key] {
				t.Errorf("%s appears twice", key)
			}
			seen[key] = true
			switch {
			case o.kind == "Namespace":
				if o.name != namespace {
					t.Errorf("Namespace %s: want only %s", o.name, namespace)
				}
			case o.namespace != namespace:
				t.Errorf("%s is in namespace %q, want %q", key, o.namespace, namespace)
			}
		}
		ns := find[*corev1.Namespace](b, namespace)
		if ns == nil {
			t.Fatalf("no Namespace %s", namespace)
		}
		if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
			t.Errorf("Namespace %s enforces Pod Security %q, want restricted", namespace, got)
		}
		for name := range binaries {
			if _, ok := b.workload(name); !ok {
				t.Errorf("no workload runs %s", name)
			}
			if find[*corev1.Service](b, name) == nil {
				t.Errorf("no Service %s", name)
			}
		}
	})
}

// pinned is an image reference that names one build: a digest, or a version
// tag (major.minor at least, so "17", "alpine", "latest" or "dev" fail).
var (
	digestRef = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	versionTg = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+.][0-9A-Za-z.-]+)?$`)
)

func checkImage(image string) error {
	if digestRef.MatchString(image) {
		return nil
	}
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	if !ok {
		return fmt.Errorf("image %q has no tag (the overlay must pin one)", image)
	}
	if !versionTg.MatchString(tag) {
		return fmt.Errorf("image %q: tag %q is not a pinned version", image, tag)
	}
	return nil
}

func TestImagesPinned(t *testing.T) {
	for _, bad := range []string{"ledgerlane/gateway", "redis:latest", "postgres:17", "nats:alpine", "x/y:dev", "registry:5000/app"} {
		if checkImage(bad) == nil {
			t.Errorf("checkImage(%q) accepted it", bad)
		}
	}
	for _, good := range []string{"registry.example.com/ledgerlane/gateway:0.1.0", "postgres:17.6", "nats:2.11.8-alpine",
		"registry:5000/app:1.2.3", "x@sha256:" + strings.Repeat("a", 64)} {
		if err := checkImage(good); err != nil {
			t.Errorf("checkImage(%q): %v", good, err)
		}
	}
	forEachOverlay(t, func(t *testing.T, b *build, _ expectation) {
		for _, w := range b.workloads() {
			for _, c := range containers(w.spec) {
				if err := checkImage(c.Image); err != nil {
					t.Errorf("%s container %s: %v", w, c.Name, err)
				}
				if c.ImagePullPolicy == corev1.PullAlways {
					t.Errorf("%s container %s: imagePullPolicy Always with a pinned image", w, c.Name)
				}
			}
		}
	})
}

func TestProbes(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, b *build, _ expectation) {
		for _, w := range b.workloads() {
			if !w.longLived {
				continue
			}
			for _, c := range w.spec.Containers {
				if c.ReadinessProbe == nil || c.LivenessProbe == nil {
					t.Errorf("%s container %s: needs a readiness and a liveness probe", w, c.Name)
				}
			}
		}
		for name, port := range binaries {
			w, ok := b.workload(name)
			if !ok {
				continue
			}
			c := w.spec.Containers[0]
			if len(w.spec.Containers) != 1 || c.Name != name {
				t.Errorf("%s: want one container named %s", w, name)
				continue
			}
			if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == port }) {
				t.Errorf("%s: does not declare port %d", w, port)
			}
			if c.StartupProbe == nil {
				t.Errorf("%s: no startup probe", w)
			}
			if name == "gateway" {
				checkHTTPProbe(t, w, c, "readiness", c.ReadinessProbe, "/v1/ready", port)
				checkHTTPProbe(t, w, c, "liveness", c.LivenessProbe, "/v1/health", port)
				continue
			}
			checkGRPCProbe(t, w, "readiness", c.ReadinessProbe, port, "")
			checkGRPCProbe(t, w, "liveness", c.LivenessProbe, port, "liveness")
			if c.StartupProbe != nil {
				checkGRPCProbe(t, w, "startup", c.StartupProbe, port, "")
			}
		}
	})
}

func checkHTTPProbe(t *testing.T, w workload, c corev1.Container, kind string, p *corev1.Probe, path string, port int32) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s: %s probe must be HTTP GET %s", w, kind, path)
		return
	}
	if p.HTTPGet.Path != path {
		t.Errorf("%s: %s probe on %s, want %s", w, kind, p.HTTPGet.Path, path)
	}
	if got := resolvePort(c, p.HTTPGet.Port); got != port {
		t.Errorf("%s: %s probe on port %v (%d), want %d", w, kind, p.HTTPGet.Port.String(), got, port)
	}
	// /v1/ready waits up to 3 s for the backends.
	if kind == "readiness" && p.TimeoutSeconds < 4 {
		t.Errorf("%s: readiness timeout %ds, want at least 4 (/v1/ready takes up to 3 s)", w, p.TimeoutSeconds)
	}
}

func checkGRPCProbe(t *testing.T, w workload, kind string, p *corev1.Probe, port int32, service string) {
	t.Helper()
	if p == nil || p.GRPC == nil {
		t.Errorf("%s: %s probe must be gRPC (grpc.health.v1)", w, kind)
		return
	}
	if p.GRPC.Port != port {
		t.Errorf("%s: %s probe on port %d, want %d", w, kind, p.GRPC.Port, port)
	}
	if got := ptrValue(p.GRPC.Service); got != service {
		t.Errorf("%s: %s probe asks for service %q, want %q", w, kind, got, service)
	}
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// resolvePort returns the number a probe or Service port refers to in c.
func resolvePort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return -1
}

func TestResources(t *testing.T) {
	check := func(t *testing.T, w workload) {
		for _, c := range containers(w.spec) {
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := c.Resources.Requests[r]
				lim, hasLim := c.Resources.Limits[r]
				if !hasReq || !hasLim {
					t.Errorf("%s container %s: needs a %s request and limit", w, c.Name, r)
					continue
				}
				if req.Cmp(lim) > 0 {
					t.Errorf("%s container %s: %s request %s above its limit %s", w, c.Name, r, req.String(), lim.String())
				}
			}
			for _, e := range c.Env {
				if e.Name != "GOMEMLIMIT" {
					continue
				}
				soft, err := parseGoMemLimit(e.Value)
				lim := c.Resources.Limits[corev1.ResourceMemory]
				if err != nil {
					t.Errorf("%s container %s: GOMEMLIMIT %q: %v", w, c.Name, e.Value, err)
				} else if soft >= lim.Value() || soft < lim.Value()*3/4 {
					t.Errorf("%s container %s: GOMEMLIMIT %s should be 75-99%% of the memory limit %s", w, c.Name, e.Value, lim.String())
				}
			}
		}
	}
	forEachOverlay(t, func(t *testing.T, b *build, _ expectation) {
		for _, w := range b.workloads() {
			check(t, w)
		}
		for name := range binaries {
			if w, ok := b.workload(name); ok && !slices.ContainsFunc(w.spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" }) {
				t.Errorf("%s: no GOMEMLIMIT", w)
			}
		}
	})
	t.Run("examples", func(t *testing.T) {
		for _, w := range workloadsOf(decodeFile(t, jobExample)) {
			check(t, w)
		}
	})
}

// parseGoMemLimit parses the runtime's GOMEMLIMIT syntax: bytes, with an
// optional B, KiB, MiB, GiB or TiB suffix.
func parseGoMemLimit(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a positive size")
	}
	return n * mult, nil
}

func TestParseGoMemLimit(t *testing.T) {
	for in, want := range map[string]int64{"460MiB": 460 << 20, "1GiB": 1 << 30, "1024": 1024, "10B": 10} {
		if got, err := parseGoMemLimit(in); err != nil || got != want {
			t.Errorf("parseGoMemLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "1.5GiB", "-1MiB", "1Mi"} {
		if _, err := parseGoMemLimit(in); err == nil {
			t.Errorf("parseGoMemLimit(%q) accepted it", in)
		}
	}
}

// checkSecurity holds every pod to Pod Security "restricted" and more:
// non-root, read-only root file system, no privilege escalation, every
// capability dropped, seccomp RuntimeDefault, no host namespaces or paths,
// no service account token.
func checkSecurity(t *testing.T, w workload) {
	t.Helper()
	s := w.spec
	if s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken must be false (nothing calls the Kubernetes API)", w)
	}
	if s.HostNetwork || s.HostPID || s.HostIPC {
		t.Errorf("%s: uses a host namespace", w)
	}
	for _, v := range s.Volumes {
		if v.HostPath != nil {
			t.Errorf("%s: hostPath volume %s", w, v.Name)
		}
	}
	psc := s.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	for _, c := range containers(s) {
		csc := c.SecurityContext
		if csc == nil {
			t.Errorf("%s container %s: no securityContext", w, c.Name)
			continue
		}
		nonRoot := ptrValue(csc.RunAsNonRoot) || (csc.RunAsNonRoot == nil && ptrValue(psc.RunAsNonRoot))
		if !nonRoot {
			t.Errorf("%s container %s: runAsNonRoot must be true", w, c.Name)
		}
		if (csc.RunAsUser != nil && *csc.RunAsUser == 0) || (csc.RunAsUser == nil && psc.RunAsUser != nil && *psc.RunAsUser == 0) {
			t.Errorf("%s container %s: runs as UID 0", w, c.Name)
		}
		seccomp := csc.SeccompProfile
		if seccomp == nil {
			seccomp = psc.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s container %s: seccomp profile must be RuntimeDefault", w, c.Name)
		}
		if !ptrValue(csc.ReadOnlyRootFilesystem) {
			t.Errorf("%s container %s: readOnlyRootFilesystem must be true", w, c.Name)
		}
		if csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
			t.Errorf("%s container %s: allowPrivilegeEscalation must be false", w, c.Name)
		}
		if ptrValue(csc.Privileged) {
			t.Errorf("%s container %s: privileged", w, c.Name)
		}
		if csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(csc.Capabilities.Add) > 0 {
			t.Errorf("%s container %s: capabilities must drop ALL and add none", w, c.Name)
		}
	}
}

func TestSecurityContext(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, b *build, _ expectation) {
		for _, w := range b.workloads() {
			checkSecurity(t, w)
		}
	})
	t.Run("examples", func(t *testing.T) {
		for _, w := range workloadsOf(decodeFile(t, jobExample)) {
			checkSecurity(t, w)
			if err := checkImage(w.spec.Containers[0].Image); err != nil {
				t.Errorf("%s: %v", w, err)
			}
		}
	})
}

// exampleSecretKeys are the keys examples/secret.example.yaml documents: the
// Secret an operator creates for the prod overlay.
func exampleSecretKeys(t *testing.T) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, obj := range decodeFile(t, secretExample) {
		s, ok := obj.(*corev1.Secret)
		if !ok || s.Name != "ledgerlane-secrets" {
			t.Fatalf("%s: want only the Secret ledgerlane-secrets", secretExample)
		}
		for k := range s.StringData {
			keys[k] = true
		}
	}
	return keys
}

// TestReferences checks that what refers to something finds it: ConfigMaps,
// Secrets and their keys, volumes, Services' selectors and target ports,
// StatefulSets' Services, and the addresses in the ConfigMap and in the dev
// Secret (a Service with that port). In the managed overlays the Secret
// ledgerlane-secrets is created outside the repository: its keys must be the
// ones examples/secret.example.yaml documents, and all of them used.
func TestReferences(t *testing.T) {
	documented := exampleSecretKeys(t)
	forEachOverlay(t, func(t *testing.T, b *build, e expectation) {
		usedExternal := map[string]bool{}
		secretKey := func(w workload, name, key string, optional bool) {
			if s := find[*corev1.Secret](b, name); s != nil {
				_, inData := s.Data[key]
				_, inString := s.StringData[key]
				if key != "" && !inData && !inString && !optional {
					t.Errorf("%s: Secret %s has no key %s", w, name, key)
				}
				return
			}
			if !e.managed || name != "ledgerlane-secrets" {
				t.Errorf("%s: Secret %s is not in the build", w, name)
				return
			}
			if key != "" && !documented[key] {
				t.Errorf("%s: key %s of Secret %s is not documented in %s", w, key, name, secretExample)
			}
			usedExternal[key] = true
		}
		configMapKey := func(w workload, name, key string, optional bool) {
			cm := find[*corev1.ConfigMap](b, name)
			if cm == nil {
				t.Errorf("%s: ConfigMap %s is not in the build", w, name)
				return
			}
			if _, ok := cm.Data[key]; key != "" && !ok && !optional {
				t.Errorf("%s: ConfigMap %s has no key %s", w, name, key)
			}
		}
		for _, w := range b.workloads() {
			volumes := map[string]bool{}
			for _, v := range w.spec.Volumes {
				volumes[v.Name] = true
				switch {
				case v.ConfigMap != nil:
					configMapKey(w, v.ConfigMap.Name, "", false)
				case v.Secret != nil:
					secretKey(w, v.Secret.SecretName, "", false)
				}
			}
			for _, c := range w.claims {
				volumes[c] = true
			}
			for _, c := range containers(w.spec) {
				for _, m := range c.VolumeMounts {
					if !volumes[m.Name] {
						t.Errorf("%s container %s: mounts unknown volume %s", w, c.Name, m.Name)
					}
				}
				for _, ef := range c.EnvFrom {
					if ef.ConfigMapRef != nil {
						configMapKey(w, ef.ConfigMapRef.Name, "", ptrValue(ef.ConfigMapRef.Optional))
					}
					if ef.SecretRef != nil {
						secretKey(w, ef.SecretRef.Name, "", ptrValue(ef.SecretRef.Optional))
					}
				}
				for _, ev := range c.Env {
					if ev.ValueFrom == nil {
						continue
					}
					if r := ev.ValueFrom.ConfigMapKeyRef; r != nil {
						configMapKey(w, r.Name, r.Key, ptrValue(r.Optional))
					}
					if r := ev.ValueFrom.SecretKeyRef; r != nil {
						secretKey(w, r.Name, r.Key, ptrValue(r.Optional))
					}
				}
			}
			if w.selector != nil && !subset(w.selector, w.labels) {
				t.Errorf("%s: selector %v does not select its own pods %v", w, w.selector, w.labels)
			}
		}
		if e.managed {
			for k := range documented {
				if !usedExternal[k] {
					t.Errorf("%s documents key %s, which no pod reads", secretExample, k)
				}
			}
		}
		for _, svc := range all[*corev1.Service](b) {
			checkService(t, b, svc)
		}
		for _, ss := range all[*appsv1.StatefulSet](b) {
			if svc := find[*corev1.Service](b, ss.Spec.ServiceName); svc == nil || svc.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("StatefulSet %s: serviceName %s is not a headless Service of the build", ss.Name, ss.Spec.ServiceName)
			}
		}
		// The addresses the binaries dial: host:port values in the shared
		// ConfigMap, and the data stores' URLs where the overlay runs them.
		cm := find[*corev1.ConfigMap](b, "ledgerlane-config")
		if cm == nil {
			t.Fatal("no ConfigMap ledgerlane-config")
		}
		for k, v := range cm.Data {
			if strings.HasSuffix(k, "_ADDR") {
				checkAddress(t, b, "ConfigMap "+k, v)
			}
		}
		if e.inCluster {
			// Generated, with a content hash suffix that kustomize also
			// writes into every reference.
			var s *corev1.Secret
			for _, v := range all[*corev1.Secret](b) {
				if strings.HasPrefix(v.Name, "ledgerlane-secrets-") {
					s = v
				}
			}
			if s == nil {
				t.Fatal("no generated Secret ledgerlane-secrets-<hash>")
			}
			for k, v := range s.Data {
				if !strings.HasSuffix(k, "_URL") {
					continue
				}
				u, err := url.Parse(string(v))
				if err != nil {
					t.Errorf("Secret %s: %v", k, err)
					continue
				}
				checkAddress(t, b, "Secret "+k, u.Host)
			}
		}
	})
}

// checkAddress checks that host:port names a Service of the build with that
// port.
func checkAddress(t *testing.T, b *build, what, addr string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Errorf("%s = %q: %v", what, addr, err)
		return
	}
	svc := find[*corev1.Service](b, host)
	if svc == nil {
		t.Errorf("%s = %q: no Service %s", what, addr, host)
		return
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == port }) {
		t.Errorf("%s = %q: Service %s has no port %s", what, addr, host, port)
	}
}

// checkService checks that a Service selects pods of the build and that each
// of its target ports is a port of those pods.
func checkService(t *testing.T, b *build, svc *corev1.Service) {
	t.Helper()
	var selected []workload
	for _, w := range b.workloads() {
		if subset(svc.Spec.Selector, w.labels) {
			selected = append(selected, w)
		}
	}
	if len(selected) == 0 {
		t.Errorf("Service %s: selector %v selects no pods", svc.Name, svc.Spec.Selector)
		return
	}
	for _, p := range svc.Spec.Ports {
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port)
		}
		for _, w := range selected {
			if !slices.ContainsFunc(w.spec.Containers, func(c corev1.Container) bool { return resolvePort(c, target) > 0 }) {
				t.Errorf("Service %s port %s: %s has no container port %s", svc.Name, p.Name, w, target.String())
			}
		}
	}
}

// TestScaling: in every overlay, an HPA's target exists and has no replicas
// field (the HPA owns the count) and a PDB selects pods. Autoscaled overlays
// have both for each binary, with a minimum of 2 and one pod at a time
// disrupted; the others run a fixed count of each binary.
func TestScaling(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, b *build, e expectation) {
		hpas := map[string]*autoscalingv2.HorizontalPodAutoscaler{}
		for _, h := range all[*autoscalingv2.HorizontalPodAutoscaler](b) {
			ref := h.Spec.ScaleTargetRef
			d := find[*appsv1.Deployment](b, ref.Name)
			if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || d == nil {
				t.Errorf("HPA %s: target %s %s is not a Deployment of the build", h.Name, ref.Kind, ref.Name)
				continue
			}
			if d.Spec.Replicas != nil {
				t.Errorf("HPA %s: Deployment %s sets replicas, which every apply would reset", h.Name, d.Name)
			}
			if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
				t.Errorf("HPA %s: minReplicas must be set and at most maxReplicas", h.Name)
			}
			if len(h.Spec.Metrics) == 0 {
				t.Errorf("HPA %s: no metrics", h.Name)
			}
			hpas[d.Spec.Template.Labels[nameLabel]] = h
		}
		pdbs := map[string]*policyv1.PodDisruptionBudget{}
		for _, p := range all[*policyv1.PodDisruptionBudget](b) {
			if p.Spec.Selector == nil {
				t.Errorf("PDB %s: no selector", p.Name)
				continue
			}
			n := 0
			for _, w := range b.workloads() {
				if subset(p.Spec.Selector.MatchLabels, w.labels) {
					pdbs[w.labels[nameLabel]] = p
					n++
				}
			}
			if n == 0 {
				t.Errorf("PDB %s selects no pods", p.Name)
			}
		}
		for name := range binaries {
			w, ok := b.workload(name)
			if !ok {
				continue
			}
			h, p := hpas[name], pdbs[name]
			if !e.autoscaled {
				if w.replicas == nil || *w.replicas < 1 {
					t.Errorf("%s: a fixed replica count is expected without an autoscaler", w)
				}
				continue
			}
			if h == nil || p == nil {
				t.Errorf("%s: needs an HPA and a PDB", w)
				continue
			}
			if *h.Spec.MinReplicas < 2 {
				t.Errorf("HPA %s: minReplicas %d, want at least 2 (the PDB must leave one pod serving)", h.Name, *h.Spec.MinReplicas)
			}
			if p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.IntValue() != 1 {
				t.Errorf("PDB %s: want maxUnavailable 1", p.Name)
			}
		}
	})
}

func TestDevRunsEverything(t *testing.T) {
	for name, e := range expectations {
		if !e.inCluster {
			continue
		}
		t.Run(name, func(t *testing.T) {
			b := render(t, name)
			nats := find[*appsv1.StatefulSet](b, "nats")
			if nats == nil || ptrValue(nats.Spec.Replicas) != 3 {
				t.Fatal("want NATS as a StatefulSet of 3")
			}
			if len(nats.Spec.VolumeClaimTemplates) == 0 {
				t.Error("NATS: JetStream needs a volume per node")
			}
			// The jobs streams are kept on as many nodes as there are, and
			// never more (a stream asking more replicas than nodes is refused).
			if cm := find[*corev1.ConfigMap](b, "ledgerlane-config"); cm == nil ||
				cm.Data["NATS_STREAM_REPLICAS"] != strconv.Itoa(int(ptrValue(nats.Spec.Replicas))) {
				t.Errorf("NATS_STREAM_REPLICAS is not the NATS node count (%d)", ptrValue(nats.Spec.Replicas))
			}
			var conf string
			for _, cm := range all[*corev1.ConfigMap](b) {
				if strings.HasPrefix(cm.Name, "nats-config") {
					conf = cm.Data["nats.conf"]
				}
			}
			for _, want := range []string{"jetstream {", "cluster {", "nats-0.nats-headless:6222", "nats-1.nats-headless:6222", "nats-2.nats-headless:6222"} {
				if !strings.Contains(conf, want) {
					t.Errorf("nats.conf lacks %q", want)
				}
			}
			for _, store := range []string{"postgres", "redis", "nats"} {
				if _, ok := b.workload(store); !ok {
					t.Errorf("no %s in the cluster", store)
				}
			}
			// The schema migrations run inside each service's start; the
			// init step waits for the database first.
			for _, svc := range []string{"finance", "metering", "jobs"} {
				w, _ := b.workload(svc)
				if w.spec == nil || !slices.ContainsFunc(w.spec.InitContainers, func(c corev1.Container) bool {
					return slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WAIT_FOR" && strings.Contains(e.Value, "postgres:5432") })
				}) {
					t.Errorf("%s: no init step waiting for postgres:5432", svc)
				}
			}
		})
	}
}

func TestProdManagedByReference(t *testing.T) {
	for name, e := range expectations {
		if !e.managed {
			continue
		}
		t.Run(name, func(t *testing.T) {
			b := render(t, name)
			if s := all[*corev1.Secret](b); len(s) > 0 {
				t.Errorf("%d Secret(s) in the build: the managed overlay's credentials are created outside the repository", len(s))
			}
			for _, w := range b.workloads() {
				if _, ok := binaries[w.labels[nameLabel]]; !ok {
					t.Errorf("%s: only the five binaries run here (the data stores are managed)", w)
				}
			}
			if jobs := all[*batchv1.Job](b); len(jobs) > 0 {
				t.Errorf("Jobs in the build: %d", len(jobs))
			}
		})
	}
}
