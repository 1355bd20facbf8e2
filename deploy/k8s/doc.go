// Package k8s holds the Kubernetes manifests of Ledgerlane (a kustomize base
// and its overlays, README.md) and no code: its test builds every overlay
// with kustomize's Go library, strict-decodes every object into the
// k8s.io/api types and checks the invariants the README promises (probes,
// resources, security context, pinned images, references between objects,
// and which pod may talk to which through the NetworkPolicies). The test
// needs no cluster and no network.
package k8s
