// Package kubernetes_test renders the Kubernetes manifests the way `kubectl apply -k` does
// and validates every object against the Kubernetes API types, offline.
package kubernetes_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// render runs kustomize on this folder, as `kubectl kustomize deploy/kubernetes` does.
func render(t *testing.T) []byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), ".")
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// documents splits a multi-document YAML stream.
func documents(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// pinnedImage is what kustomization.yaml sets for the image named "mayday".
func pinnedImage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name, NewName, NewTag, Digest string
		} `json:"images"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	for _, im := range k.Images {
		if im.Name != "mayday" {
			continue
		}
		if im.NewName == "" || (im.NewTag == "") == (im.Digest == "") {
			t.Fatalf("kustomization.yaml: the mayday image needs newName and one of newTag or digest: %+v", im)
		}
		if im.Digest != "" {
			return im.NewName + "@" + im.Digest
		}
		return im.NewName + ":" + im.NewTag
	}
	t.Fatal("kustomization.yaml has no images entry named mayday")
	return ""
}

// strictly decodes one object into the Kubernetes type of its kind: an unknown field or a
// value of the wrong type is an error, as the API server's validation would report.
func decode(t *testing.T, doc []byte) (kind string, pod *corev1.PodSpec) {
	t.Helper()
	var meta struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		t.Fatal(err)
	}
	switch meta.Kind {
	case "Job":
		var j batchv1.Job
		if err := yaml.UnmarshalStrict(doc, &j); err != nil {
			t.Fatalf("Job does not validate: %v\n%s", err, doc)
		}
		if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("Job %s: restartPolicy %q, want Never", j.Name, j.Spec.Template.Spec.RestartPolicy)
		}
		return meta.Kind, &j.Spec.Template.Spec
	case "PersistentVolumeClaim":
		var c corev1.PersistentVolumeClaim
		if err := yaml.UnmarshalStrict(doc, &c); err != nil {
			t.Fatalf("PersistentVolumeClaim does not validate: %v", err)
		}
		if _, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
			t.Errorf("PersistentVolumeClaim %s requests no storage", c.Name)
		}
		return meta.Kind, nil
	}
	t.Fatalf("unexpected kind %q in the rendered manifests", meta.Kind)
	return "", nil
}

var imageTag = regexp.MustCompile(`^[^@]+(:[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64})$`)

func TestManifestsRenderValidateAndPinTheImage(t *testing.T) {
	want := pinnedImage(t)
	kinds := map[string]int{}
	maydayPods := 0
	for _, doc := range documents(render(t)) {
		kind, pod := decode(t, doc)
		kinds[kind]++
		if pod == nil {
			continue
		}
		checkPodCanWriteItsVolume(t, pod)
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			if !imageTag.MatchString(c.Image) || strings.HasSuffix(c.Image, ":latest") {
				t.Errorf("container %s: image %q is not pinned to a tag or digest (and never latest)", c.Name, c.Image)
			}
			if strings.Contains(c.Image, "mayday") {
				maydayPods++
				if c.Image != want {
					t.Errorf("container %s runs %q, want kustomization.yaml's %q", c.Name, c.Image, want)
				}
			}
		}
	}
	if kinds["Job"] != 2 || kinds["PersistentVolumeClaim"] != 1 {
		t.Errorf("rendered %v, want 2 Jobs and 1 PersistentVolumeClaim", kinds)
	}
	if maydayPods != 2 {
		t.Errorf("%d containers run mayday, want 2 (the sweep and the merge)", maydayPods)
	}
}

// checkPodCanWriteItsVolume: the image's user is not root, so the pod must run as that
// user and give the volume its group (fsGroup), or no shard can be written.
func checkPodCanWriteItsVolume(t *testing.T, pod *corev1.PodSpec) {
	t.Helper()
	uid := dockerfileUser(t)
	sc := pod.SecurityContext
	if sc == nil || sc.FSGroup == nil || sc.RunAsUser == nil || sc.RunAsNonRoot == nil {
		t.Fatalf("pod needs securityContext runAsNonRoot, runAsUser and fsGroup; has %+v", sc)
	}
	if !*sc.RunAsNonRoot || *sc.RunAsUser != uid || *sc.FSGroup != uid {
		t.Errorf("pod securityContext runAsUser %d fsGroup %d, want the image's user %d for both",
			*sc.RunAsUser, *sc.FSGroup, uid)
	}
	for _, c := range pod.Containers {
		if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation must be false", c.Name)
		}
	}
}

// dockerfileUser is the uid the Dockerfile gives the working folder (and distroless's
// nonroot user has).
func dockerfileUser(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("distroless/cc-debian12:nonroot")) {
		t.Fatal("Dockerfile: the runtime stage is no longer distroless nonroot; update this test")
	}
	m := regexp.MustCompile(`--chown=(\d+):`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Dockerfile: no COPY --chown=UID: for the working folder")
	}
	var uid int64
	for _, c := range m[1] {
		uid = uid*10 + int64(c-'0')
	}
	return uid
}

// The manifest as a file says `image: mayday` for kustomize to replace; applying it with -f
// would pull docker.io/library/mayday, so the docs must say -k.
func TestDocsApplyTheFolderWithKustomize(t *testing.T) {
	for _, f := range []string{"../../docs/scale-out.md", "sweep-job.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("apply -f deploy/kubernetes")) {
			t.Errorf("%s applies the manifest with -f; the image is set by kustomize, so use -k deploy/kubernetes", f)
		}
		if !bytes.Contains(b, []byte("kubectl apply -k deploy/kubernetes")) {
			t.Errorf("%s does not say `kubectl apply -k deploy/kubernetes`", f)
		}
	}
}

// mayday is built from a clone; the docs must not tell anyone to install or fetch it from a
// module path, version or address that nothing publishes.
func TestDocsInstallFromAClone(t *testing.T) {
	unpublished := regexp.MustCompile(`github\.com/mayday-sim/mayday/cmd/mayday@|raw\.githubusercontent\.com/mayday-sim|ghcr\.io/mayday-sim|mayday:latest`)
	files := []string{"../../README.md", "../../Dockerfile", "sweep-job.yaml", "kustomization.yaml"}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, docs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := unpublished.FindString(line); m != "" {
				t.Errorf("%s:%d refers to %q, which nothing publishes; install from a clone (go install ./cmd/mayday)", f, i+1, m)
			}
		}
	}
}
