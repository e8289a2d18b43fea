// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// pod is a kube-apiserver static-pod manifest for member with flags.
func pod(member string, flags ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n  namespace: kube-system\n  annotations:\n    kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint: " + member + "\n")
	b.WriteString("spec:\n  containers:\n  - name: kube-apiserver\n    command:\n    - kube-apiserver\n")
	for _, f := range flags {
		b.WriteString("    - " + f + "\n")
	}
	return b.String()
}

// kcm is a kube-controller-manager static-pod manifest with flags.
func kcm(flags ...string) string {
	s := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-controller-manager\n  namespace: kube-system\nspec:\n  containers:\n  - name: kube-controller-manager\n    command:\n    - kube-controller-manager\n"
	for _, f := range flags {
		s += "    - " + f + "\n"
	}
	return s
}

// jwks is the JWKS of the public keys in the PEM files.
func jwks(t *testing.T, files ...string) string {
	t.Helper()
	var ks []keys.Key
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		k, err := keys.ParsePEM(b, f)
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, keys.Public(k)...)
	}
	b, err := keys.JWKS(ks)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	keyA = "../keys/testdata/gen/rsa-drift.pub"
	keyB = "../keys/testdata/gen/ec384.pub"
	iss  = "--service-account-issuer=https://kubernetes.default.svc.cluster.local"
	ep   = "--service-account-signing-endpoint=/run/signer/signer.sock"
)

func set(t *testing.T, side string, docs ...string) *input.Set {
	t.Helper()
	s := &input.Set{}
	for i, d := range docs {
		if err := s.Add(side+"/"+string(rune('a'+i))+".yaml", []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

type signerCase struct {
	name    string
	cur, pl []string
	signer  preflight.Signer
	want    []string
	// sev is the severity of the first finding in want, when it matters.
	sev catalogue.Severity
	// note is a substring one of the report's notes must hold.
	note string
}

func runSigner(t *testing.T, cases []signerCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := preflight.Run(preflight.Config{Current: set(t, "current", c.cur...), Planned: set(t, "planned", c.pl...), Signer: c.signer})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(r.Findings); !slices.Equal(got, c.want) {
				t.Fatalf("findings %v, want %v\n%v", got, c.want, r.Findings)
			}
			if c.sev != "" {
				i := slices.IndexFunc(r.Findings, func(f finding.Finding) bool { return f.ID == c.want[0] })
				if r.Findings[i].Severity != c.sev {
					t.Errorf("%s: severity %s, want %s: %s", c.want[0], r.Findings[i].Severity, c.sev, r.Findings[i].Message)
				}
			}
			if c.note != "" && !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, c.note) }) {
				t.Errorf("no note with %q: %q", c.note, r.Notes)
			}
		})
	}
}

// TestSignerWithKeyFiles: an endpoint beside key files, in a manifest or as kubeadm writes it.
func TestSignerWithKeyFiles(t *testing.T) {
	kubeadm := func(apiArgs, kcmArgs string, extra ...string) []string {
		cc := "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n" + apiArgs
		if kcmArgs != "" {
			cc += "controllerManager:\n  extraArgs:\n" + kcmArgs
		}
		return append([]string{cc}, extra...)
	}
	epArg := "  - name: service-account-signing-endpoint\n    value: /run/signer/signer.sock\n"
	kcmOff := "  - name: service-account-private-key-file\n    value: \"\"\n"
	runSigner(t, []signerCase{
		{name: "static manifest keeps the key file", cur: []string{pod("10.0.0.1", iss, ep)},
			pl: []string{pod("10.0.0.1", iss, ep, "--service-account-key-file=/etc/kubernetes/pki/sa.pub")}, want: []string{"signer-with-key-files"},
			sev: catalogue.Error, note: "No kube-controller-manager manifest"},
		{name: "static manifest without key files", cur: []string{pod("10.0.0.1", iss, ep)},
			pl: []string{pod("10.0.0.1", iss, ep, "--profiling=false"), kcm("--use-service-account-credentials=true")}, want: []string{"no-change"}},
		{name: "static kcm still signs", cur: []string{pod("10.0.0.1", iss, ep)},
			pl:   []string{pod("10.0.0.1", iss, ep, "--profiling=false"), kcm("--service-account-private-key-file=/etc/kubernetes/pki/sa.key")},
			want: []string{"signer-with-key-files"}, sev: catalogue.Warning},
		{name: "kubeadm extraArgs alone", cur: kubeadm(epArg, kcmOff), pl: kubeadm(epArg+"  - name: profiling\n    value: \"false\"\n", kcmOff),
			want: []string{"signer-with-key-files"}, sev: catalogue.Error},
		{name: "kubeadm patches on the host", cur: kubeadm(epArg, kcmOff),
			pl:   kubeadm(epArg+"  - name: profiling\n    value: \"false\"\n", kcmOff, "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\npatches:\n  directory: /etc/kubernetes/patches\n"),
			want: []string{"signer-with-key-files"}, sev: catalogue.Warning},
		{name: "no endpoint", cur: kubeadm("  - name: profiling\n    value: \"true\"\n", ""), pl: kubeadm("  - name: profiling\n    value: \"false\"\n", ""),
			want: []string{"no-change"}},
	})
}

func kcp(extraArgs, kcmArgs, files, extra string) string {
	s := `apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: w1-control-plane
spec:
  replicas: 1
  version: v1.36.3
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        extraArgs:
` + extraArgs
	if kcmArgs != "" {
		s += "      controllerManager:\n        extraArgs:\n" + kcmArgs
	}
	if files != "" {
		s += "    files:\n" + files
	}
	return s + extra
}

// TestSignerWithKeyFilesKCP: a KubeadmControlPlane needs a kube-apiserver patch in its files.
func TestSignerWithKeyFilesKCP(t *testing.T) {
	epArg := "          service-account-signing-endpoint: /run/signer/signer.sock\n"
	patch := `    - path: /etc/kubernetes/patches/kube-apiserver0+json.json
      content: |
        [{"op": "replace", "path": "/spec/containers/0/command", "value": ["kube-apiserver", "--service-account-signing-endpoint=/run/signer/signer.sock"]}]
`
	patches := "    initConfiguration:\n      patches:\n        directory: /etc/kubernetes/patches\n    joinConfiguration:\n      patches:\n        directory: /etc/kubernetes/patches\n"
	kcmOff := "          service-account-private-key-file: \"\"\n"
	cur := kcp(epArg, kcmOff, patch, patches)
	runSigner(t, []signerCase{
		{name: "no patch", cur: []string{cur}, pl: []string{kcp(epArg+"          profiling: \"false\"\n", kcmOff, "", "")},
			want: []string{"rollout-planned", "signer-with-key-files"}},
		{name: "patched", cur: []string{cur}, pl: []string{kcp(epArg+"          profiling: \"false\"\n", kcmOff, patch, patches)},
			want: []string{"no-change", "rollout-planned"}, note: "the patch /etc/kubernetes/patches/kube-apiserver0+json.json edits its command"},
		{name: "patched, kcm keeps its key", cur: []string{cur}, pl: []string{kcp(epArg+"          profiling: \"false\"\n", "", patch, patches)},
			want: []string{"rollout-planned", "signer-with-key-files"}},
	})
}

// TestSignerMaxLifetime: the declared lifetime against 600 s and --service-account-max-token-expiration.
func TestSignerMaxLifetime(t *testing.T) {
	cur := []string{pod("10.0.0.1", iss, ep)}
	pl := []string{pod("10.0.0.1", iss, ep, "--profiling=false"), kcm()}
	long := []string{pod("10.0.0.1", iss, ep, "--service-account-max-token-expiration=48h"), kcm()}
	runSigner(t, []signerCase{
		{name: "below 600 s", cur: cur, pl: pl, signer: preflight.Signer{MaxTokenExpiration: 300 * time.Second}, want: []string{"signer-max-lifetime-too-short"}},
		{name: "600 s", cur: cur, pl: pl, signer: preflight.Signer{MaxTokenExpiration: 600 * time.Second}, want: []string{"no-change"}},
		{name: "below the flag", cur: cur, pl: long, signer: preflight.Signer{MaxTokenExpiration: 24 * time.Hour}, want: []string{"signer-max-lifetime-too-short"}},
		{name: "above the flag", cur: cur, pl: long, signer: preflight.Signer{MaxTokenExpiration: 72 * time.Hour}, want: []string{"no-change"}},
		{name: "not given", cur: cur, pl: pl, want: []string{"no-change"}, note: "--signer-max-token-expiration"},
		{name: "no signer", cur: []string{pod("10.0.0.1", iss)}, pl: []string{pod("10.0.0.1", iss, "--profiling=false")},
			signer: preflight.Signer{MaxTokenExpiration: time.Second}, want: []string{"no-change"}},
	})
}

// TestSignerSwitch: a roll that turns the signer on or off, with and without each side's keys.
func TestSignerSwitch(t *testing.T) {
	a, b, ab := jwks(t, keyA), jwks(t, keyB), jwks(t, keyA, keyB)
	files := []string{pod("10.0.0.1", iss, "--service-account-key-file=/etc/kubernetes/pki/sa.pub"), pod("10.0.0.2", iss, "--service-account-key-file=/etc/kubernetes/pki/sa.pub")}
	signer := []string{pod("10.0.0.1", iss, ep), pod("10.0.0.2", iss, ep), kcm()}
	with := func(docs []string, extra ...string) []string { return append(slices.Clone(docs), extra...) }
	runSigner(t, []signerCase{
		{name: "on, signer serves the old key", cur: with(files, a), pl: with(signer, a), want: []string{"no-change"}},
		{name: "on, signer serves another key", cur: with(files, a), pl: with(signer, b), want: []string{"signer-switch-without-old-keys"}, sev: catalogue.Error},
		{name: "on, signer serves both", cur: with(files, a), pl: with(signer, ab), want: []string{"signer-switch-without-old-keys"}, sev: catalogue.Warning},
		{name: "on, no keys given", cur: files, pl: signer, want: []string{"signer-switch-without-old-keys"}, sev: catalogue.Warning},
		{name: "off, files keep the signer's key", cur: with(signer, a), pl: with(files, a), want: []string{"no-change"}},
		{name: "off, files sign with another key", cur: with(signer, a), pl: with(files, b), want: []string{"signer-switch-without-old-keys"}, sev: catalogue.Error},
	})
}

// TestAuthnIssuerIsSAIssuer: a JWT issuer equal to a planned service-account issuer.
func TestAuthnIssuerIsSAIssuer(t *testing.T) {
	authn := func(url string) string {
		return "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: " + url + "\n    audiences: [x]\n"
	}
	flag := "--authentication-config=/etc/kubernetes/authn.yaml"
	cur := []string{pod("10.0.0.1", iss, flag)}
	runSigner(t, []signerCase{
		{name: "overlap", cur: cur, pl: []string{pod("10.0.0.1", iss, flag, "--profiling=false"), authn("https://kubernetes.default.svc.cluster.local")},
			want: []string{"authn-config-issuer-is-sa-issuer"}},
		{name: "another issuer", cur: cur, pl: []string{pod("10.0.0.1", iss, flag, "--profiling=false"), authn("https://idp.example.com")},
			want: []string{"no-change"}},
		{name: "issuer change makes it overlap", cur: []string{pod("10.0.0.1", iss, flag), authn("https://idp.example.com")},
			pl:   []string{pod("10.0.0.1", "--service-account-issuer=https://idp.example.com", iss, flag)},
			want: []string{"authn-config-issuer-is-sa-issuer", "issuer-switch-before-all-accept"}},
		{name: "file not given", cur: cur, pl: []string{pod("10.0.0.1", iss, flag, "--profiling=false")}, want: []string{"no-change"}, note: "not judged"},
		{name: "no flag", cur: []string{pod("10.0.0.1", iss)}, pl: []string{pod("10.0.0.1", iss, "--profiling=false"), authn("https://kubernetes.default.svc.cluster.local")},
			want: []string{"no-change"}, note: "runs no --authentication-config"},
	})
	inline := `    - path: /etc/kubernetes/authn.yaml
      content: |
        apiVersion: apiserver.config.k8s.io/v1
        kind: AuthenticationConfiguration
        jwt:
        - issuer:
            url: https://kubernetes.default.svc.cluster.local
            audiences: [x]
`
	args := "          authentication-config: /etc/kubernetes/authn.yaml\n"
	runSigner(t, []signerCase{
		{name: "kcp files", cur: []string{kcp(args, "", "", "")}, pl: []string{kcp(args, "", inline, "")},
			want: []string{"authn-config-issuer-is-sa-issuer", "rollout-planned"}},
	})
}

// TestJWKSPrivateMembers: a JWKS with private members is read as its public keys, with a note
// that never holds them; a symmetric key is refused.
func TestJWKSPrivateMembers(t *testing.T) {
	var doc struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal([]byte(jwks(t, keyA)), &doc); err != nil {
		t.Fatal(err)
	}
	const secret = "c2VjcmV0LXByaXZhdGUtZXhwb25lbnQ"
	doc.Keys[0]["d"], doc.Keys[0]["p"] = secret, secret
	b, _ := json.Marshal(doc)
	s := set(t, "planned", string(b))
	if len(s.JWKS) != 1 || len(s.JWKS[0].Keys) != 1 || s.JWKS[0].Keys[0].Private != nil {
		t.Fatalf("JWKS %+v", s.JWKS)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "private key material") || strings.Contains(s.Notes[0], secret) {
		t.Errorf("notes %q", s.Notes)
	}
	doc.Keys[0]["k"] = secret
	b, _ = json.Marshal(doc)
	if err := (&input.Set{}).Add("sym.json", b); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("symmetric key: %v", err)
	}
}

// TestSignerPerMemberSockets: members with signers on sockets of their own, as every node has
// one (and the lab's members), compare by keys, never by socket path: no false alarm when the
// keys are the same or not given, sa-key-change when the signers serve other keys.
func TestSignerPerMemberSockets(t *testing.T) {
	a, b := jwks(t, keyA), jwks(t, keyB)
	sock := func(n string) string { return "--service-account-signing-endpoint=/var/lib/lab/" + n + "/signer.sock" }
	cur := []string{pod("10.0.0.1", iss, sock("m1")), pod("10.0.0.2", iss, sock("m2"))}
	pl := []string{pod("10.0.0.3", iss, sock("m3")), kcm()}
	with := func(docs []string, extra ...string) []string { return append(slices.Clone(docs), extra...) }
	runSigner(t, []signerCase{
		{name: "keys not given", cur: cur, pl: pl, want: []string{"no-change"}},
		{name: "same keys", cur: with(cur, a), pl: with(pl, a), want: []string{"no-change"}},
		{name: "another key", cur: with(cur, a), pl: with(pl, b), want: []string{"sa-key-change"}},
	})
}

// TestAddKeys: keys given in code (a lab scenario's signer key files) count as a JWKS, public
// halves only.
func TestAddKeys(t *testing.T) {
	b, err := os.ReadFile("../keys/testdata/gen/rsa-drift.key")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := keys.ParsePEM(b, "rsa-drift.key")
	if err != nil || ks[0].Private == nil {
		t.Fatalf("%v %v", ks, err)
	}
	cur := set(t, "current", pod("10.0.0.1", iss, "--service-account-key-file=/etc/kubernetes/pki/sa.pub"), jwks(t, keyA))
	pl := set(t, "planned", pod("10.0.0.1", iss, ep), kcm())
	pl.AddKeys("signer keys", ks)
	if pl.JWKS[0].Keys[0].Private != nil {
		t.Fatal("AddKeys kept a private key")
	}
	r, err := preflight.Run(preflight.Config{Current: cur, Planned: pl, Signer: preflight.Signer{MaxTokenExpiration: 24 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r.Findings); !slices.Equal(got, []string{"no-change"}) {
		t.Errorf("findings %v: the signer serves the current key (rsa-drift)", r.Findings)
	}
}
