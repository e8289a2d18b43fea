package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const committed = "../../deploy/krew/credwatch.yaml"

// TestManifestValid runs krew's own validation (cmd/validate-krew-manifest of sigs.k8s.io/krew,
// pinned in go.mod) on the committed manifest and on a freshly rendered one: apiVersion, kind,
// name, semver version, sha256 form, file operations, selectors matching a supported platform
// and none overlapping. -skip-install: installing needs the released archives.
func TestManifestValid(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "credwatch.yaml")
	var b bytes.Buffer
	if err := render(&b, "v1.2.3", strings.NewReader(fakeChecksums("v1.2.3"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fresh, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{committed, fresh} {
		out, err := exec.Command("go", "tool", "validate-krew-manifest", "-manifest", m, "-skip-install").CombinedOutput()
		if err != nil {
			t.Errorf("krew rejects %s: %v\n%s", m, err, out)
		}
	}
}

// TestManifestCurrent: the committed manifest is what the renderer makes from its own version and
// checksums, so only the release's numbers differ from one release to the next.
func TestManifestCurrent(t *testing.T) {
	raw, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var sums strings.Builder
	for _, p := range m.Spec.Platforms {
		fmt.Fprintf(&sums, "%s  %s\n", p.SHA256, filepath.Base(p.URI))
	}
	var b bytes.Buffer
	if err := render(&b, m.Spec.Version, strings.NewReader(sums.String())); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(raw) {
		t.Errorf("deploy/krew/credwatch.yaml differs from what hack/krew renders for %s; regenerate it (make krew-manifest)", m.Spec.Version)
	}
	// after a local release build, the manifest must carry its checksums
	if sums, err := os.ReadFile("../../dist/checksums.txt"); err == nil {
		for _, p := range m.Spec.Platforms {
			name := filepath.Base(p.URI)
			if strings.Contains(string(sums), name) && !strings.Contains(string(sums), p.SHA256+"  "+name) {
				t.Errorf("dist/checksums.txt has another sha256 for %s than the manifest: make krew-manifest", name)
			}
		}
	}
}

// TestTargetsMatchGoreleaser: the manifest offers exactly the builds and archive names of
// .goreleaser.yaml.
func TestTargetsMatchGoreleaser(t *testing.T) {
	raw, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ProjectName string `json:"project_name"`
		Builds      []struct {
			Binary string   `json:"binary"`
			GOOS   []string `json:"goos"`
			GOARCH []string `json:"goarch"`
		} `json:"builds"`
		Archives []struct {
			NameTemplate    string   `json:"name_template"`
			Formats         []string `json:"formats"`
			FormatOverrides []struct {
				GOOS    string   `json:"goos"`
				Formats []string `json:"formats"`
			} `json:"format_overrides"`
			Files []string `json:"files"`
		} `json:"archives"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) != 1 || len(cfg.Archives) != 1 {
		t.Fatalf("want one build and one archive in .goreleaser.yaml, got %d and %d", len(cfg.Builds), len(cfg.Archives))
	}
	b, a := cfg.Builds[0], cfg.Archives[0]
	var want []target
	for _, os := range b.GOOS {
		for _, arch := range b.GOARCH {
			want = append(want, target{os, arch})
		}
	}
	slices.SortFunc(want, func(x, y target) int { return strings.Compare(x.OS+x.Arch, y.OS+y.Arch) })
	if !slices.Equal(want, targets) {
		t.Errorf("goreleaser builds %v, the manifest offers %v", want, targets)
	}
	for _, tg := range targets {
		name := strings.NewReplacer("{{ .ProjectName }}", cfg.ProjectName, "{{ .Version }}", "1.2.3",
			"{{ .Os }}", tg.OS, "{{ .Arch }}", tg.Arch).Replace(a.NameTemplate)
		format := a.Formats[0]
		for _, o := range a.FormatOverrides {
			if o.GOOS == tg.OS {
				format = o.Formats[0]
			}
		}
		if got := name + "." + format; got != tg.Archive("v1.2.3") {
			t.Errorf("goreleaser names the %s/%s archive %s, the manifest %s", tg.OS, tg.Arch, got, tg.Archive("v1.2.3"))
		}
		if bin := strings.TrimSuffix(tg.Bin(), ".exe"); bin != b.Binary {
			t.Errorf("goreleaser's binary is %s, the manifest's %s", b.Binary, bin)
		}
	}
	if !slices.Contains(a.Files, "README.md") {
		t.Error("the archives must carry README.md: the manifest copies it")
	}
}

func fakeChecksums(version string) string {
	var b strings.Builder
	for i, tg := range targets {
		fmt.Fprintf(&b, "%064x  %s\n", i+1, tg.Archive(version))
	}
	return b.String()
}
