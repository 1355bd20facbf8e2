package k8s

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// namespace is where every object of every overlay lives.
const namespace = "ledgerlane"

// decoder strict-decodes YAML or JSON into the k8s.io/api type its apiVersion
// and kind name: an unknown or duplicated field is an error, and so is a kind
// the scheme does not know (the manifests use only these groups).
var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme,
		autoscalingv2.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}()

func decode(doc []byte) (runtime.Object, error) {
	obj, _, err := decoder.Decode(doc, nil, nil)
	return obj, err
}

// object is one decoded object of a build.
type object struct {
	kind, name, namespace string
	obj                   runtime.Object
}

// build is what one overlay renders to.
type build struct {
	overlay string
	objects []object
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*build{}
)

// overlayNames lists the directories under overlays/ that hold a
// kustomization: every one of them is built and checked.
func overlayNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("overlays")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join("overlays", e.Name(), "kustomization.yaml")); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no overlay under overlays/")
	}
	return names
}

// render builds overlays/<name> with kustomize (on the disk, no network:
// nothing refers to a remote base) and strict-decodes every object, once per
// test binary.
func render(t *testing.T, name string) *build {
	t.Helper()
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if b, ok := builds[name]; ok {
		return b
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("overlays", name))
	if err != nil {
		t.Fatalf("kustomize build overlays/%s: %v", name, err)
	}
	b := &build{overlay: name}
	for _, r := range m.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			t.Fatalf("overlays/%s: %s %s: %v", name, r.GetKind(), r.GetName(), err)
		}
		obj, err := decode(doc)
		if err != nil {
			t.Fatalf("overlays/%s: %s %s does not strict-decode: %v", name, r.GetKind(), r.GetName(), err)
		}
		b.objects = append(b.objects, object{kind: r.GetKind(), name: r.GetName(), namespace: r.GetNamespace(), obj: obj})
	}
	builds[name] = b
	return b
}

// decodeFile strict-decodes every document of a YAML file.
func decodeFile(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	for doc := range bytes.SplitSeq(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, err := decode(doc)
		if err != nil {
			t.Fatalf("%s does not strict-decode: %v", path, err)
		}
		out = append(out, obj)
	}
	return out
}

// all returns the objects of type T (a pointer to a k8s.io/api type).
func all[T runtime.Object](b *build) []T {
	var out []T
	for _, o := range b.objects {
		if v, ok := o.obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// find returns the object of type T named name, or nil.
func find[T interface {
	runtime.Object
	GetName() string
}](b *build, name string) T {
	var zero T
	for _, v := range all[T](b) {
		if v.GetName() == name {
			return v
		}
	}
	return zero
}

// workload is the pod template of a Deployment, StatefulSet, DaemonSet or Job.
type workload struct {
	kind, name string
	replicas   *int32
	selector   map[string]string // matchLabels; nil for a Job
	labels     map[string]string
	spec       *corev1.PodSpec
	claims     []string // StatefulSet volumeClaimTemplates
	longLived  bool     // serves until stopped (probes apply)
}

func (w workload) String() string { return w.kind + "/" + w.name }

func workloadsOf(objs []runtime.Object) []workload {
	var out []workload
	for _, obj := range objs {
		switch v := obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{kind: "Deployment", name: v.Name, replicas: v.Spec.Replicas,
				selector: matchLabels(v.Spec.Selector.MatchLabels), labels: v.Spec.Template.Labels,
				spec: &v.Spec.Template.Spec, longLived: true})
		case *appsv1.StatefulSet:
			w := workload{kind: "StatefulSet", name: v.Name, replicas: v.Spec.Replicas,
				selector: matchLabels(v.Spec.Selector.MatchLabels), labels: v.Spec.Template.Labels,
				spec: &v.Spec.Template.Spec, longLived: true}
			for _, c := range v.Spec.VolumeClaimTemplates {
				w.claims = append(w.claims, c.Name)
			}
			out = append(out, w)
		case *appsv1.DaemonSet:
			out = append(out, workload{kind: "DaemonSet", name: v.Name,
				selector: matchLabels(v.Spec.Selector.MatchLabels), labels: v.Spec.Template.Labels,
				spec: &v.Spec.Template.Spec, longLived: true})
		case *batchv1.Job:
			name := v.Name
			if name == "" {
				name = v.GenerateName
			}
			out = append(out, workload{kind: "Job", name: name, labels: v.Spec.Template.Labels, spec: &v.Spec.Template.Spec})
		}
	}
	return out
}

func matchLabels(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func (b *build) workloads() []workload {
	objs := make([]runtime.Object, len(b.objects))
	for i, o := range b.objects {
		objs[i] = o.obj
	}
	return workloadsOf(objs)
}

// workload returns the workload whose pods carry app.kubernetes.io/name=name.
func (b *build) workload(name string) (workload, bool) {
	for _, w := range b.workloads() {
		if w.labels[nameLabel] == name {
			return w, true
		}
	}
	return workload{}, false
}

// containers are a pod's init containers and containers.
func containers(spec *corev1.PodSpec) []corev1.Container {
	return slices.Concat(spec.InitContainers, spec.Containers)
}

const nameLabel = "app.kubernetes.io/name"

// subset reports whether every label of sel is in labels (a matchLabels
// selector; an empty one selects nothing here, which a Service or PDB never
// wants).
func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
