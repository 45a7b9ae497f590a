// Package kubernetes_test checks the Kubernetes manifests of deploy/kubernetes: each is
// decoded strictly into the Kubernetes API type its kind names, so a misspelt or misplaced
// field fails the test rather than being dropped silently by the cluster.
package kubernetes_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// typeMeta is the part of every manifest that says what it is.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// decode decodes one manifest strictly into the type of its kind.
func decode(t *testing.T, name string, doc []byte) any {
	t.Helper()
	var tm typeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	default:
		t.Fatalf("%s: kind %q of apiVersion %q: add its type to this test", name, tm.Kind, tm.APIVersion)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return obj
}

// TestManifestsDecodeStrictly decodes every manifest and checks what the README relies on:
// the agents run as an Indexed Job whose completion index names each agent, every
// container runs dblat with a command it has, and every Secret it reads exists.
func TestManifestsDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var jobs []*batchv1.Job
	secrets := map[string]*corev1.Secret{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			switch o := decode(t, f+"#"+strconv.Itoa(i), doc).(type) {
			case *batchv1.Job:
				jobs = append(jobs, o)
			case *corev1.Secret:
				secrets[o.Name] = o
			}
		}
	}
	commands := []string{"agent", "run", "load", "report", "study"}
	var agents *batchv1.Job
	for _, j := range jobs {
		for _, c := range j.Spec.Template.Spec.Containers {
			if len(c.Args) == 0 || !slices.Contains(commands, c.Args[0]) {
				t.Errorf("job %s: container %s runs %v, not a dblat command (%s)", j.Name, c.Name, c.Args, strings.Join(commands, ", "))
			}
			for _, e := range c.Env {
				if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
					s, ok := secrets[ref.SecretKeyRef.Name]
					if _, has := s.StringData[ref.SecretKeyRef.Key]; !ok || !has {
						t.Errorf("job %s reads key %s of secret %s, which no manifest defines", j.Name, ref.SecretKeyRef.Key, ref.SecretKeyRef.Name)
					}
				}
			}
			if len(c.Args) > 0 && c.Args[0] == "agent" {
				agents = j
			}
		}
	}
	if agents == nil {
		t.Fatal("no job runs dblat agent")
	}
	spec := agents.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion ||
		spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		t.Errorf("job %s must be Indexed with completions = parallelism (every agent at once)", agents.Name)
	}
	c := spec.Template.Spec.Containers[0]
	named := false
	for i, a := range c.Args {
		if a == "--name" && i+1 < len(c.Args) {
			for _, e := range c.Env {
				if strings.Contains(c.Args[i+1], "$("+e.Name+")") && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
					strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index") {
					named = true
				}
			}
		}
	}
	if !named {
		t.Errorf("job %s: the agent's --name must come from the completion index", agents.Name)
	}
}
