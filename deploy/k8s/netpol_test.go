package k8s

import (
	"maps"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// endpoint is one end of a connection: a pod (labels set, in a namespace) or
// an address outside the cluster's pods.
type endpoint struct {
	name     string
	ns       string
	nsLabels map[string]string
	labels   map[string]string // nil for an address
	addr     netip.Addr        // valid for an address
	ports    []corev1.ContainerPort
}

func (e endpoint) isPod() bool { return e.labels != nil }

// policies evaluates the NetworkPolicies of a build the way the API defines
// them: a pod selected by no policy of a direction is open in that direction;
// a selected one admits a connection only if a rule of one of those policies
// matches the peer and the port. A connection needs the source's egress and
// the destination's ingress. Addresses, and pods of other namespaces, are not
// governed by these policies (their side always allows).
type policies struct {
	list []*networkingv1.NetworkPolicy
}

type rule struct {
	peers []networkingv1.NetworkPolicyPeer
	ports []networkingv1.NetworkPolicyPort
}

func (n policies) allows(src, dst endpoint, port int32, proto corev1.Protocol) bool {
	return n.admits(src, dst, networkingv1.PolicyTypeEgress, port, proto, dst.ports) &&
		n.admits(dst, src, networkingv1.PolicyTypeIngress, port, proto, dst.ports)
}

func (n policies) admits(self, peer endpoint, dir networkingv1.PolicyType, port int32, proto corev1.Protocol, dstPorts []corev1.ContainerPort) bool {
	if !self.isPod() || self.ns != namespace {
		return true
	}
	selected := false
	for _, p := range n.list {
		if !hasType(p, dir) || !selects(&p.Spec.PodSelector, self.labels) {
			continue
		}
		selected = true
		var rules []rule
		if dir == networkingv1.PolicyTypeIngress {
			for _, r := range p.Spec.Ingress {
				rules = append(rules, rule{r.From, r.Ports})
			}
		} else {
			for _, r := range p.Spec.Egress {
				rules = append(rules, rule{r.To, r.Ports})
			}
		}
		for _, r := range rules {
			if peersMatch(r.peers, peer, p.Namespace) && portsMatch(r.ports, port, proto, dstPorts) {
				return true
			}
		}
	}
	return !selected
}

func hasType(p *networkingv1.NetworkPolicy, dir networkingv1.PolicyType) bool {
	if len(p.Spec.PolicyTypes) == 0 {
		return dir == networkingv1.PolicyTypeIngress || len(p.Spec.Egress) > 0
	}
	return slices.Contains(p.Spec.PolicyTypes, dir)
}

func selects(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		panic(err) // checked by TestNetworkPolicies before evaluating
	}
	return s.Matches(labels.Set(l))
}

func peersMatch(peers []networkingv1.NetworkPolicyPeer, e endpoint, policyNS string) bool {
	if len(peers) == 0 {
		return true
	}
	for _, p := range peers {
		if peerMatches(p, e, policyNS) {
			return true
		}
	}
	return false
}

func peerMatches(p networkingv1.NetworkPolicyPeer, e endpoint, policyNS string) bool {
	if p.IPBlock != nil {
		if e.isPod() {
			return false // pod addresses are the CNI's; the rules never rely on them
		}
		if !netip.MustParsePrefix(p.IPBlock.CIDR).Contains(e.addr) {
			return false
		}
		for _, ex := range p.IPBlock.Except {
			if netip.MustParsePrefix(ex).Contains(e.addr) {
				return false
			}
		}
		return true
	}
	if !e.isPod() {
		return false
	}
	if p.NamespaceSelector == nil {
		if e.ns != policyNS {
			return false
		}
	} else if !selects(p.NamespaceSelector, e.nsLabels) {
		return false
	}
	return p.PodSelector == nil || selects(p.PodSelector, e.labels)
}

func portsMatch(ports []networkingv1.NetworkPolicyPort, port int32, proto corev1.Protocol, dstPorts []corev1.ContainerPort) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if pp != proto {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.String:
			for _, cp := range dstPorts {
				if cp.Name == p.Port.StrVal && cp.ContainerPort == port {
					return true
				}
			}
		case p.EndPort != nil:
			if port >= p.Port.IntVal && port <= *p.EndPort {
				return true
			}
		case p.Port.IntVal == port:
			return true
		}
	}
	return false
}

// flow is one connection the system needs: src may reach dst on port.
type flow struct {
	src, dst string
	port     int32
}

// internalFlows are the connections the binaries make inside the namespace
// and to the data stores (pods in dev, managed addresses in prod):
//
//   - the gateway calls the four services; jobs and finance (statement
//     imports) call the converter; jobs calls metering (refunds);
//     metering (meteringctl in a metering pod) and meteringctl call finance's
//     DirectoryService;
//   - the data stores' clients reach them; the NATS nodes reach each other.
func internalFlows() map[flow]bool {
	w := map[flow]bool{}
	for _, f := range []flow{
		{"gateway", "finance", 9001}, {"gateway", "converter", 9002}, {"gateway", "metering", 9003}, {"gateway", "jobs", 9004},
		{"jobs", "converter", 9002}, {"jobs", "metering", 9003}, {"finance", "converter", 9002},
		{"metering", "finance", 9001}, {"meteringctl", "finance", 9001},
		{"nats", "nats", 6222},
	} {
		w[f] = true
	}
	for store, clients := range map[string][]string{
		"postgres": {"finance", "metering", "jobs", "meteringctl"},
		"redis":    {"gateway", "metering"},
		"nats":     {"gateway", "jobs"},
	} {
		for _, c := range clients {
			w[flow{c, store, storePorts[store]}] = true
		}
	}
	return w
}

// wanted says whether src may reach dst on port: the internal flows, plus
//
//   - anyone outside the namespace (the internet, an ingress controller)
//     reaches the gateway's 8080, and nothing else of the namespace;
//   - Prometheus, in namespace monitoring, scrapes every pod's 9090;
//   - jobs delivers webhooks to public addresses, on any port.
func wanted(internal map[flow]bool, src, dst endpoint, port int32) bool {
	switch {
	case !ours(src) && dst.name == "gateway" && port == 8080:
		return true
	case src.name == "prometheus" && ours(dst) && port == 9090:
		return true
	case src.name == "jobs" && !dst.isPod() && public(dst.addr):
		return true
	}
	return internal[flow{src.name, dst.name, port}]
}

// ours: a pod of the namespace, which the policies govern.
func ours(e endpoint) bool { return e.isPod() && e.ns == namespace }

// public: not a private, shared, loopback, link-local or "this network"
// address (the webhook client's own rule, services/jobs/webhook).
func public(a netip.Addr) bool {
	for _, p := range []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.168.0.0/16", "::1/128", "fc00::/7", "fe80::/10"} {
		if netip.MustParsePrefix(p).Contains(a) {
			return false
		}
	}
	return true
}

var storePorts = map[string]int32{"postgres": 5432, "redis": 6379, "nats": 4222}

// TestNetworkPolicies evaluates the overlay's NetworkPolicies for every pair
// of endpoints and every port the destination listens on: the pods of the
// build (plus a meteringctl Job's pod from the example), the data stores
// (pods in dev, the managed services' addresses in prod), a public and a
// private address, a client on the internet, an ingress controller and
// Prometheus in other namespaces. Exactly the wanted flows may connect; DNS
// is open to every pod.
func TestNetworkPolicies(t *testing.T) {
	jobPods := workloadsOf(decodeFile(t, jobExample))
	forEachOverlay(t, func(t *testing.T, b *build, e expectation) {
		n := policies{list: all[*networkingv1.NetworkPolicy](b)}
		for _, p := range n.list {
			if _, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector); err != nil {
				t.Fatalf("NetworkPolicy %s: %v", p.Name, err)
			}
			for _, r := range p.Spec.Ingress {
				checkPeers(t, p.Name, r.From)
			}
			for _, r := range p.Spec.Egress {
				checkPeers(t, p.Name, r.To)
			}
		}
		ns := find[*corev1.Namespace](b, namespace)
		nsLabels := maps.Clone(ns.Labels)
		nsLabels["kubernetes.io/metadata.name"] = namespace

		var pods []endpoint
		for _, w := range append(b.workloads(), jobPods...) {
			ep := endpoint{name: w.labels[nameLabel], ns: namespace, nsLabels: nsLabels, labels: w.labels}
			for _, c := range w.spec.Containers {
				ep.ports = append(ep.ports, c.Ports...)
			}
			pods = append(pods, ep)
		}
		other := func(name, ns string) endpoint {
			return endpoint{name: name, ns: ns, nsLabels: map[string]string{"kubernetes.io/metadata.name": ns},
				labels: map[string]string{nameLabel: name}}
		}
		address := func(name, addr string, ports ...int32) endpoint {
			ep := endpoint{name: name, addr: netip.MustParseAddr(addr)}
			for _, p := range ports {
				ep.ports = append(ep.ports, corev1.ContainerPort{ContainerPort: p, Protocol: corev1.ProtocolTCP})
			}
			return ep
		}
		sources := slices.Concat(pods, []endpoint{
			address("internet", "198.51.100.7"),
			other("ingress-controller", "ingress-nginx"),
			other("prometheus", "monitoring"),
		})
		dests := slices.Concat(pods, []endpoint{
			address("public-host", "203.0.113.9", 443, 8443, 5432, 6379, 4222),
			address("private-host", "10.20.30.40", 443, 5432, 6379, 4222),
			address("link-local", "169.254.169.254", 80),
		})
		if e.managed {
			for store, port := range storePorts {
				addr, ok := managedStore(n, store, port)
				if !ok {
					t.Errorf("no egress rule reaches the managed %s (NetworkPolicy %s-clients-egress, port %d)", store, store, port)
					continue
				}
				dests = append(dests, address(store, addr.String(), port))
			}
		}
		internal := internalFlows()
		evaluated := map[flow]bool{}
		for _, src := range sources {
			for _, dst := range dests {
				if !ours(src) && !ours(dst) {
					continue // neither end is governed by these policies
				}
				for _, p := range dst.ports {
					if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
						continue
					}
					f := flow{src.name, dst.name, p.ContainerPort}
					evaluated[f] = true
					want := wanted(internal, src, dst, p.ContainerPort)
					if got := n.allows(src, dst, p.ContainerPort, corev1.ProtocolTCP); got != want {
						t.Errorf("%s -> %s:%d: allowed=%v, want %v", src.name, dst.name, p.ContainerPort, got, want)
					}
				}
			}
		}
		// Every internal flow whose ends this overlay has was evaluated (a
		// store or a port that moved would otherwise go unnoticed).
		for f := range internal {
			if hasEndpoint(sources, f.src) && !evaluated[f] {
				t.Errorf("wanted flow %s -> %s:%d: no such destination in overlays/%s", f.src, f.dst, f.port, b.overlay)
			}
		}
		resolver := address("dns", "10.96.0.10", 53)
		for _, src := range pods {
			for _, proto := range []corev1.Protocol{corev1.ProtocolUDP, corev1.ProtocolTCP} {
				if !n.allows(src, resolver, 53, proto) {
					t.Errorf("%s cannot resolve names (%s 53)", src.name, proto)
				}
			}
		}
	})
}

func hasEndpoint(eps []endpoint, name string) bool {
	return slices.ContainsFunc(eps, func(e endpoint) bool { return e.name == name })
}

// checkPeers rejects what the evaluator (and a reader) would misjudge.
func checkPeers(t *testing.T, policy string, peers []networkingv1.NetworkPolicyPeer) {
	t.Helper()
	for _, p := range peers {
		for _, sel := range []*metav1.LabelSelector{p.PodSelector, p.NamespaceSelector} {
			if sel == nil {
				continue
			}
			if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
				t.Fatalf("NetworkPolicy %s: %v", policy, err)
			}
		}
		if p.IPBlock == nil {
			continue
		}
		cidr, err := netip.ParsePrefix(p.IPBlock.CIDR)
		if err != nil {
			t.Fatalf("NetworkPolicy %s: %v", policy, err)
		}
		for _, ex := range p.IPBlock.Except {
			exp, err := netip.ParsePrefix(ex)
			if err != nil || !cidr.Contains(exp.Addr()) || exp.Bits() < cidr.Bits() {
				t.Fatalf("NetworkPolicy %s: except %s is not inside %s", policy, ex, cidr)
			}
		}
	}
}

// managedStore returns the address the prod overlay lets the store's clients
// reach: the first ipBlock of NetworkPolicy <store>-clients-egress on port.
func managedStore(n policies, store string, port int32) (netip.Addr, bool) {
	for _, p := range n.list {
		if p.Name != store+"-clients-egress" {
			continue
		}
		for _, r := range p.Spec.Egress {
			if !portsMatch(r.Ports, port, corev1.ProtocolTCP, nil) {
				continue
			}
			for _, peer := range r.To {
				if peer.IPBlock != nil {
					return netip.MustParsePrefix(peer.IPBlock.CIDR).Addr(), true
				}
			}
		}
	}
	return netip.Addr{}, false
}

// TestPolicyEvaluator pins the evaluator's reading of the API on small cases,
// so that TestNetworkPolicies' verdicts can be trusted.
func TestPolicyEvaluator(t *testing.T) {
	tcp := corev1.ProtocolTCP
	port := func(p int32) []networkingv1.NetworkPolicyPort {
		v := intstr.FromInt32(p)
		return []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &v}}
	}
	sel := func(name string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{nameLabel: name}}
	}
	np := func(name string, spec networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec}
	}
	pod := func(name string) endpoint {
		return endpoint{name: name, ns: namespace, labels: map[string]string{nameLabel: name},
			ports: []corev1.ContainerPort{{Name: "grpc", ContainerPort: 9000, Protocol: tcp}}}
	}
	a, b := pod("a"), pod("b")
	ext := endpoint{name: "ext", addr: netip.MustParseAddr("203.0.113.1")}
	cases := []struct {
		name string
		list []*networkingv1.NetworkPolicy
		src  endpoint
		dst  endpoint
		want bool
	}{
		{"no policy: open", nil, a, b, true},
		{"ingress deny", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress"}})}, a, b, false},
		{"egress deny", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Egress"}})}, a, b, false},
		{"egress deny leaves an address's connection in", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Egress"}})}, ext, b, true},
		{"ingress from a on the port", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{"Ingress"},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("a")}}, Ports: port(9000)}},
		})}, a, b, true},
		{"ingress from a, other port", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{"Ingress"},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("a")}}, Ports: port(9001)}},
		})}, a, b, false},
		{"named port", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{"Ingress"},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: func() *intstr.IntOrString {
				v := intstr.FromString("grpc")
				return &v
			}()}}}},
		})}, a, b, true},
		{"ipBlock does not match pods", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{"Egress"},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}}}},
		})}, a, b, false},
		{"ipBlock except", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{"Egress"},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"203.0.113.0/24"}}}}}},
		})}, a, ext, false},
		{"namespaceSelector alone excludes this namespace's pods", []*networkingv1.NetworkPolicy{np("d", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{"Ingress"},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}}}},
		})}, a, b, false},
	}
	for _, c := range cases {
		if got := (policies{list: c.list}).allows(c.src, c.dst, 9000, tcp); got != c.want {
			t.Errorf("%s: allows = %v, want %v", c.name, got, c.want)
		}
	}
}
