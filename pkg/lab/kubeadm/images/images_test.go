// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package images

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/credwatch/credwatch/pkg/lab"
	labimage "github.com/credwatch/credwatch/pkg/lab/image"
	"github.com/credwatch/credwatch/pkg/ociimage"
)

func TestRefs(t *testing.T) {
	tests := []struct {
		version string
		tags    []string
		wantErr string
	}{
		{version: "v1.30.14", tags: []string{
			"registry.k8s.io/etcd:3.5.15-0",
			"registry.k8s.io/kube-apiserver:v1.30.14",
			"registry.k8s.io/kube-controller-manager:v1.30.14",
			"registry.k8s.io/kube-proxy:v1.30.14",
			"registry.k8s.io/kube-scheduler:v1.30.14",
			"registry.k8s.io/pause:3.10",
			"registry.k8s.io/pause:3.9",
		}},
		{version: "v1.36.3", tags: []string{
			"registry.k8s.io/etcd:3.6.8-0",
			"registry.k8s.io/kube-apiserver:v1.36.3",
			"registry.k8s.io/kube-controller-manager:v1.36.3",
			"registry.k8s.io/kube-proxy:v1.36.3",
			"registry.k8s.io/kube-scheduler:v1.36.3",
			"registry.k8s.io/pause:3.10",
			"registry.k8s.io/pause:3.10.2",
		}},
		{version: "v1.29.15", wantErr: "no image list for Kubernetes v1.29.15"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			refs, err := Refs(tt.version)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Refs: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var tags []string
			for _, r := range refs {
				tags = append(tags, r.Tag)
				if _, err := name.NewTag(r.Tag, name.StrictValidation); err != nil {
					t.Errorf("tag %q: %v", r.Tag, err)
				}
				if r.Binary == "etcd" && r.Dir != "etcd-"+lab.EtcdVersion {
					t.Errorf("etcd from %s, want the lab's etcd-%s", r.Dir, lab.EtcdVersion)
				}
				if r.Optional != (r.Binary == "kube-proxy") {
					t.Errorf("%s optional=%v", r.Tag, r.Optional)
				}
			}
			if !slices.Equal(tags, tt.tags) {
				t.Errorf("tags\n%q\nwant\n%q", tags, tt.tags)
			}
		})
	}
}

// dynamicBinary is a small dynamic executable of this machine, standing in for the lab's
// binaries, or the test is skipped.
func dynamicBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/bin/true", "/usr/bin/true", "/bin/ls"} {
		if f, err := os.Open(p); err == nil {
			f.Close()
			return p
		}
	}
	t.Skip("no /bin/true or /bin/ls on this machine")
	return ""
}

// fakeBinDir is a lab bin dir holding copies of src as the binaries of version named, plus etcd.
func fakeBinDir(t *testing.T, src, version string, names ...string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	put := func(sub, name string) {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sub, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		put(version, n)
	}
	put("etcd-"+lab.EtcdVersion, "etcd")
	return dir
}

// fakeLabImages writes a lab images tarball holding only a pause image.
func fakeLabImages(t *testing.T) string {
	t.Helper()
	img, err := ociimage.Program("pause", "amd64", []byte("pause"), time.Unix(0, 0), ociimage.Labels{}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "lab-images.tar")
	if err := ociimage.WriteDockerArchive(p, map[string]v1.Image{labimage.PauseRef: img}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildMissingBinary(t *testing.T) {
	src := dynamicBinary(t)
	tests := []struct {
		name    string
		have    []string
		noEtcd  bool
		version string
		want    []string
	}{
		{name: "v1.30.14 controller-manager and scheduler", have: []string{"kube-apiserver"}, version: "v1.30.14",
			want: []string{"kube-controller-manager v1.30.14", "kube-scheduler v1.30.14", "make capi-binaries"}},
		{name: "v1.36.3 apiserver", have: []string{"kube-controller-manager", "kube-scheduler"}, version: "v1.36.3",
			want: []string{"kube-apiserver v1.36.3", "make lab-binaries"}},
		{name: "etcd", have: []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}, noEtcd: true, version: "v1.30.14",
			want: []string{"etcd etcd-" + lab.EtcdVersion, "make lab-binaries"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := fakeBinDir(t, src, tt.version, tt.have...)
			if tt.noEtcd {
				if err := os.RemoveAll(filepath.Join(bin, "etcd-"+lab.EtcdVersion)); err != nil {
					t.Fatal(err)
				}
			}
			out := t.TempDir()
			_, err := Build(context.Background(), Config{BinDir: bin, Version: tt.version, OutDir: out, LabImages: fakeLabImages(t)})
			if err == nil {
				t.Fatal("Build succeeded without the binaries")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "kube-proxy") {
				t.Errorf("error %q names the optional kube-proxy", err)
			}
			if left, _ := os.ReadDir(out); len(left) != 0 {
				t.Errorf("a failed Build left %d files in the output directory", len(left))
			}
		})
	}
}

// tarTags returns the RepoTags of every image in a docker-archive tarball.
func tarTags(t *testing.T, file string) []string {
	t.Helper()
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(file) })
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, d := range m {
		tags = append(tags, d.RepoTags...)
	}
	slices.Sort(tags)
	return tags
}

// tarImage returns image tag of the docker-archive tarball file.
func tarImage(t *testing.T, file, tag string) v1.Image {
	t.Helper()
	ref, err := name.NewTag(tag)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(file, &ref)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// walkFiles calls fn with each entry of img's flattened filesystem.
func walkFiles(t *testing.T, img v1.Image, fn func(h *tar.Header, r io.Reader)) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(h, tr)
	}
}

// imageFiles returns the regular files of image tag in the tarball file (path -> mode) and its config.
func imageFiles(t *testing.T, file, tag string) (map[string]int64, *v1.ConfigFile) {
	t.Helper()
	img := tarImage(t, file, tag)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]int64{}
	walkFiles(t, img, func(h *tar.Header, _ io.Reader) {
		if h.Typeflag == tar.TypeReg {
			files["/"+h.Name] = h.Mode
		}
	})
	return files, cf
}

// digests returns the manifest digest of every image in a docker-archive tarball, by tag.
func digests(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tag := range tarTags(t, file) {
		d, err := tarImage(t, file, tag).Digest()
		if err != nil {
			t.Fatal(err)
		}
		out[tag] = d.String()
	}
	return out
}

func TestBuild(t *testing.T) {
	src := dynamicBinary(t)
	shared, err := SharedFiles(src)
	if err != nil {
		t.Fatal(err)
	}
	labImages := fakeLabImages(t)
	tests := []struct {
		name      string
		have      []string
		kubeProxy bool
	}{
		{name: "without kube-proxy", have: []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}},
		{name: "with kube-proxy", have: []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}, kubeProxy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{BinDir: fakeBinDir(t, src, "v1.30.14", tt.have...), Version: "v1.30.14", OutDir: t.TempDir(), LabImages: labImages}
			out, err := Build(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"registry.k8s.io/etcd:3.5.15-0", "registry.k8s.io/kube-apiserver:v1.30.14", "registry.k8s.io/kube-controller-manager:v1.30.14",
				"registry.k8s.io/kube-scheduler:v1.30.14", "registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.9"}
			if tt.kubeProxy {
				want = append(want, "registry.k8s.io/kube-proxy:v1.30.14")
				slices.Sort(want)
			}
			if got := tarTags(t, out); !slices.Equal(got, want) {
				t.Errorf("tags\n%q\nwant\n%q", got, want)
			}
			for _, bin := range []string{"etcd", "kube-apiserver"} {
				tag := map[string]string{"etcd": "registry.k8s.io/etcd:3.5.15-0", "kube-apiserver": "registry.k8s.io/kube-apiserver:v1.30.14"}[bin]
				files, cf := imageFiles(t, out, tag)
				for _, p := range append([]string{"/usr/local/bin/" + bin}, shared...) {
					if files[p]&0o111 == 0 {
						t.Errorf("%s: %s missing or not executable (%o)", tag, p, files[p])
					}
				}
				if cf.Config.User != "0:0" || !slices.Contains(cf.Config.Env, "PATH=/usr/local/bin:/usr/bin:/bin") {
					t.Errorf("%s: user %q env %q, want root and /usr/local/bin on PATH", tag, cf.Config.User, cf.Config.Env)
				}
			}

			// A second Build of the same inputs returns the cached tarball without writing it.
			st, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Build(context.Background(), c)
			if err != nil || again != out {
				t.Fatalf("second Build: %s, %v; want %s", again, err, out)
			}
			if st2, _ := os.Stat(out); !st2.ModTime().Equal(st.ModTime()) {
				t.Error("second Build rewrote the tarball")
			}

			// The same inputs into another directory give the same images. (Not the same bytes:
			// go-containerregistry's tarball writer orders the blobs by map iteration.)
			c.OutDir = t.TempDir()
			other, err := Build(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := digests(t, out), digests(t, other); !maps.Equal(a, b) {
				t.Errorf("two builds of the same inputs differ:\n%v\n%v", a, b)
			}

			// A changed binary gives a new tarball, replacing the old one.
			bin := filepath.Join(c.BinDir, "v1.30.14", "kube-apiserver")
			if err := os.Chtimes(bin, time.Now(), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			rebuilt, err := Build(context.Background(), c)
			if err != nil || rebuilt == other {
				t.Fatalf("Build after a binary changed: %s, %v; want a new tarball", rebuilt, err)
			}
			if _, err := os.Stat(other); !os.IsNotExist(err) {
				t.Errorf("the old tarball %s is still there: %v", other, err)
			}
		})
	}
}

func TestBuildConfig(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"no output directory", Config{Version: "v1.30.14"}, "no output directory"},
		{"no version", Config{OutDir: "x"}, "no Kubernetes version"},
		{"unknown version", Config{OutDir: "x", Version: "v1.2.3", LabImages: "x"}, "no image list for Kubernetes v1.2.3"},
		{"another arch", Config{OutDir: "x", Version: "v1.30.14", Arch: "s390x"}, "copied from this"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.BinDir = t.TempDir()
			if _, err := Build(context.Background(), tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestRefsMatchKubeadm checks Refs against `kubeadm config images list` of the lab's kubeadm of
// each version, when it is built (`make capi-binaries`), run in a new network namespace: it must
// not reach a registry. Refs adds containerd's pause tag and leaves CoreDNS out.
func TestRefsMatchKubeadm(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a new network namespace needs root")
	}
	for _, version := range Versions() {
		t.Run(version, func(t *testing.T) {
			kubeadm := filepath.Join(lab.DefaultBinDir(), version, "kubeadm")
			if _, err := os.Stat(kubeadm); err != nil {
				t.Skipf("no kubeadm %s in the lab bin dir (v1.30.14: make capi-binaries): %v", version, err)
			}
			cmd := exec.Command(kubeadm, "config", "images", "list", "--kubernetes-version", version)
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("kubeadm config images list: %v", err)
			}
			var want []string
			for _, tag := range strings.Fields(string(out)) {
				if !strings.Contains(tag, "/coredns/") {
					want = append(want, tag)
				}
			}
			want = append(want, labimage.PauseRef)
			slices.Sort(want)
			refs, err := Refs(version)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range refs {
				got = append(got, r.Tag)
			}
			if !slices.Equal(got, slices.Compact(want)) {
				t.Errorf("Refs(%s)\n%q\nkubeadm lists (CoreDNS out, containerd's pause in)\n%q", version, got, want)
			}
		})
	}
}
