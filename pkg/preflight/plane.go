// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"path"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/cmdline"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// Creds are what decides which tokens a member mints and accepts.
type Creds struct {
	// Issuers: the first signs, all are accepted.
	Issuers []string `json:"issuers"`
	// Audiences are the API audiences (--api-audiences, or the issuers when unset).
	Audiences []string `json:"audiences"`
	// Signing and Verify name keys: "kid:<kid>" when the key is known, "file:<path without
	// extension>" for key files, else a description of where the key lives.
	Signing string   `json:"signingKey"`
	Verify  []string `json:"verifyKeys"`
}

func (c Creds) primary() string {
	if len(c.Issuers) == 0 {
		return ""
	}
	return c.Issuers[0]
}

func (c Creds) equal(o Creds) bool {
	return slices.Equal(c.Issuers, o.Issuers) && sameSet(c.Audiences, o.Audiences) &&
		c.Signing == o.Signing && sameSet(c.Verify, o.Verify)
}

// sameSet reports whether a and b hold the same strings, in any order, without allocating: the
// roll's trust matrix compares every member's credentials at every step (BenchmarkPreflight500Machines).
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// accepts reports whether a member with c accepts a token minted by a member with m.
func (c Creds) accepts(m Creds) bool {
	return slices.Contains(c.Issuers, m.primary()) && slices.Contains(c.Verify, m.Signing) &&
		slices.ContainsFunc(m.Audiences, func(a string) bool { return slices.Contains(c.Audiences, a) })
}

// Rewrite is a boot command that rewrites the issuer (sed in pre/postKubeadmCommands).
type Rewrite struct {
	Raw     string // the issuer as written in the spec
	Command string
	Value   string // what sed writes in its place ("$CLOUDFRONT_DOMAIN")
	// InitOnly: the command edits /run/kubeadm/kubeadm.yaml, which only the init machine reads.
	InitOnly bool
	// AfterStart: the command edits the static-pod manifest after kubeadm started the API server.
	AfterStart bool
}

// Plane is one side's control plane as the predictions see it.
type Plane struct {
	Source  string // kubeadmcontrolplane, kubeadm, static-pod, kops
	Cluster string
	// Creds is what the members run as intended (boot rewrites applied); JoinCreds what a
	// machine that joins runs (differs when a rewrite reaches the init machine only).
	Creds, JoinCreds Creds
	Rewrite          *Rewrite
	Members          []Member
	MembersKnown     bool
	KCP              *input.KCP
	Version          string
	ExternalEtcd     bool
	HasJoinConfig    bool
	RawArgs          input.Args
	// LiveKeys: Creds' keys are the ones the running members serve (their JWKS), which the
	// spec's do not match.
	LiveKeys bool
	// KeyUnread names the <cluster>-sa Secret whose key this side could not read (no tls.crt
	// or tls.key in data or stringData): its signing key is not judged.
	KeyUnread string
	// KeysFromSpec: the keys are files the KubeadmConfigSpec brings itself (its apiserver flags
	// point at them), not the <cluster>-sa Secret's.
	KeysFromSpec bool
	// SAAbsent names the <cluster>-sa Secret a live read found absent ("" when it is there, or
	// when the side was read from files, which cannot say a Secret is absent).
	SAAbsent string
	// Notes are what the predictions should say about this side's inputs.
	Notes []string
}

// Member is one control-plane member.
type Member struct {
	Name    string `json:"name"`
	Config  string `json:"config"` // current or planned
	Created string `json:"-"`
	Version string `json:"-"`
	Infra   string `json:"-"`
	Creds   Creds  `json:"-"`
}

const defaultDNSDomain = "cluster.local"

func newPlane(s *input.Set) *Plane {
	switch {
	case len(s.KCPs) > 0:
		return kcpPlane(s)
	case len(s.StaticPods) > 0:
		return staticPlane(s)
	case len(s.Kops) > 0:
		return kopsPlane(s)
	case len(s.Kubeadm) > 0:
		return kubeadmPlane(s)
	}
	return nil
}

func kcpPlane(s *input.Set) *Plane {
	k := s.KCPs[0]
	cc := k.Spec.ClusterConfiguration
	if cc == nil {
		cc = &input.ClusterConfiguration{}
	}
	p := &Plane{Source: "kubeadmcontrolplane", Cluster: s.ClusterName(), KCP: &k, Version: k.Version,
		ExternalEtcd: cc.Etcd.External != nil, MembersKnown: true, RawArgs: cc.APIServer.ExtraArgs, HasJoinConfig: true}
	if p.Cluster == "" {
		p.Cluster = strings.TrimSuffix(k.Name, "-control-plane")
	}
	c := argCreds(cc.APIServer.ExtraArgs, dnsDomain(s, cc))
	key := "secret " + p.Cluster + "-sa (not in the input)"
	for _, sec := range s.SASecrets {
		if sec.Name != p.Cluster+"-sa" {
			continue
		}
		key = "kid:" + sec.KeyID
		if sec.KeyID == "" {
			// Two unread keys would compare equal: name the Secret's side, never "kid:".
			key, p.KeyUnread = "secret "+sec.Name+" (no key read from "+sec.File+")", sec.String()
		}
	}
	if slices.Contains(s.Absent, "Secret/"+p.Cluster+"-sa") {
		p.SAAbsent = p.Cluster + "-sa"
		key = "secret " + p.SAAbsent + " (absent from the cluster)"
	}
	c.Signing, c.Verify = key, []string{key}
	if sign, verify, ok := specKeyFiles(cc.APIServer.ExtraArgs, k.Spec.Files, key); ok {
		// The apiserver's flags point at key files the KubeadmConfigSpec brings itself: the
		// <cluster>-sa Secret's key is written to /etc/kubernetes/pki but not used.
		c.Signing, c.Verify, p.KeyUnread, p.KeysFromSpec = sign, verify, "", true
	}
	p.Creds, p.JoinCreds = c, c
	if rw := findRewrite(k.Spec, c.primary()); rw != nil {
		p.Rewrite = rw
		rewritten := "<set at boot: " + rw.Value + ">"
		p.Creds = withIssuer(c, rewritten)
		if !rw.InitOnly {
			p.JoinCreds = p.Creds
		}
	}
	var ms []input.Machine
	for _, m := range s.Machines {
		if m.ControlPlane {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(a, b input.Machine) int { return strings.Compare(a.Created+a.Name, b.Created+b.Name) })
	for _, m := range ms {
		p.Members = append(p.Members, Member{Name: m.Name, Created: m.Created, Version: m.Version, Infra: m.InfraTemplate, Creds: p.Creds})
	}
	if len(p.Members) == 0 {
		for i := range k.Replicas {
			p.Members = append(p.Members, Member{Name: k.Name + "-" + itoa(i+1), Creds: p.Creds})
		}
	}
	applyServed(p, s.Served)
	return p
}

// dnsDomain is the DNS domain Cluster API gives kubeadm: a v1beta1 clusterConfiguration's
// networking.dnsDomain, else the Cluster's spec.clusterNetwork.serviceDomain (v1beta2 has only
// the latter: cluster-api@v1.8.1 and v1.14.0, the KubeadmConfig controller).
func dnsDomain(s *input.Set, cc *input.ClusterConfiguration) string {
	if cc.Networking.DNSDomain != "" {
		return cc.Networking.DNSDomain
	}
	for _, c := range s.Clusters {
		if c.ServiceDomain != "" {
			return c.ServiceDomain
		}
	}
	return ""
}

func withIssuer(c Creds, iss string) Creds {
	out := c
	out.Issuers = append([]string{iss}, c.Issuers[1:]...)
	if slices.Equal(c.Audiences, c.Issuers) {
		out.Audiences = out.Issuers
	}
	return out
}

// argCreds reads issuers and audiences from kube-apiserver flags, with kube-apiserver's and
// kubeadm's defaults.
func argCreds(a input.Args, dnsDomain string) Creds {
	var c Creds
	for _, v := range a["service-account-issuer"] {
		c.Issuers = append(c.Issuers, splitList(v)...)
	}
	if len(c.Issuers) == 0 {
		if dnsDomain == "" {
			dnsDomain = defaultDNSDomain
		}
		c.Issuers = []string{"https://kubernetes.default.svc." + dnsDomain}
	}
	for _, v := range a["api-audiences"] {
		c.Audiences = append(c.Audiences, splitList(v)...)
	}
	if len(c.Audiences) == 0 {
		c.Audiences = slices.Clone(c.Issuers)
	}
	return c
}

// defaultCertDir is kubeadm's certificatesDir.
const defaultCertDir = "/etc/kubernetes/pki"

func fileKeys(a input.Args, certDir string) (string, []string) {
	sign, verify := keyPaths(a, certDir)
	out := make([]string, 0, len(verify))
	for _, f := range verify {
		out = append(out, fileKey(f))
	}
	return fileKey(sign), out
}

// keyPaths are the signing key file and the verifying key files kube-apiserver runs with:
// kubeadm's sa.key and sa.pub under certDir unless the flags name others.
func keyPaths(a input.Args, certDir string) (string, []string) {
	if certDir == "" {
		certDir = defaultCertDir
	}
	sign := certDir + "/sa.key"
	if v := a["service-account-signing-key-file"]; len(v) > 0 {
		sign = v[len(v)-1]
	}
	verify := []string{certDir + "/sa.pub"}
	if v := a["service-account-key-file"]; len(v) > 0 {
		verify = nil
		for _, f := range v {
			verify = append(verify, splitList(f)...)
		}
	}
	return sign, verify
}

// specKeyFiles are the keys a KubeadmConfigSpec's apiserver flags name when they point away from
// kubeadm's /etc/kubernetes/pki/sa.key and sa.pub (ok false otherwise): a file of the spec's
// files with a PEM key is that key's kid; one whose content comes from a Secret is named with the
// Secret; one the spec does not write is the path (the machine image or a command provides it);
// kubeadm's own sa.key and sa.pub are saKey, the <cluster>-sa Secret's.
func specKeyFiles(a input.Args, files []input.File, saKey string) (sign string, verify []string, ok bool) {
	signPath, verifyPaths := keyPaths(a, "")
	if signPath == defaultCertDir+"/sa.key" && slices.Equal(verifyPaths, []string{defaultCertDir + "/sa.pub"}) {
		return "", nil, false
	}
	key := func(p string) string {
		if p == defaultCertDir+"/sa.key" || p == defaultCertDir+"/sa.pub" {
			return saKey
		}
		for _, f := range files {
			if f.Path != p {
				continue
			}
			if f.ContentFrom != nil {
				return fileKey(p) + " (Secret " + f.ContentFrom.Secret.Name + " key " + f.ContentFrom.Secret.Key + ")"
			}
			if ks, err := keys.ParsePEM([]byte(f.Text()), p); err == nil && len(ks) > 0 {
				return "kid:" + ks[0].KeyID
			}
		}
		return fileKey(p)
	}
	for _, p := range verifyPaths {
		verify = append(verify, key(p))
	}
	return key(signPath), verify, true
}

func fileKey(p string) string {
	return "file:" + strings.TrimSuffix(p, path.Ext(p))
}

func kubeadmPlane(s *input.Set) *Plane {
	p := &Plane{Source: "kubeadm", Cluster: s.ClusterName()}
	cc := &input.ClusterConfiguration{}
	for _, f := range s.Kubeadm {
		if f.Cluster != nil {
			cc = f.Cluster
		}
		if f.Kind == "JoinConfiguration" {
			p.HasJoinConfig = true
		}
	}
	p.RawArgs, p.Version, p.ExternalEtcd = cc.APIServer.ExtraArgs, cc.KubernetesVersion, cc.Etcd.External != nil
	p.Creds = argCreds(cc.APIServer.ExtraArgs, cc.Networking.DNSDomain)
	p.Creds.Signing, p.Creds.Verify = fileKeys(cc.APIServer.ExtraArgs, cc.CertificatesDir)
	p.JoinCreds = p.Creds
	p.Members = []Member{{Name: "member", Creds: p.Creds}}
	return p
}

func staticPlane(s *input.Set) *Plane {
	p := &Plane{Source: "static-pod", Cluster: s.ClusterName(), MembersKnown: len(s.StaticPods) > 1}
	for i, sp := range s.StaticPods {
		a := flagArgs(sp.Flags)
		c := argCreds(a, "")
		c.Signing, c.Verify = fileKeys(a, "")
		if i == 0 {
			p.Creds, p.JoinCreds, p.RawArgs = c, c, a
		}
		p.Members = append(p.Members, Member{Name: sp.Member, Creds: c})
	}
	return p
}

func flagArgs(f cmdline.Flags) input.Args {
	a := input.Args{}
	for k, v := range f {
		a[k] = v
	}
	return a
}

func kopsPlane(s *input.Set) *Plane {
	k := s.Kops[0]
	p := &Plane{Source: "kops", Cluster: k.Name, Version: k.KubernetesVersion, MembersKnown: true}
	iss := k.Issuer
	if iss == "" {
		iss = kopsDefaultIssuer(k)
	}
	p.Creds.Issuers = append([]string{iss}, k.Additional...)
	p.Creds.Audiences = k.Audiences
	if len(p.Creds.Audiences) == 0 {
		p.Creds.Audiences = []string{"kubernetes.svc.default"} // pkg/model/components/discovery.go
	}
	p.Creds.Signing, p.Creds.Verify = "kops keyset service-account", []string{"kops keyset service-account"}
	p.JoinCreds = p.Creds
	for _, g := range s.KopsGroups {
		if g.Role != "Master" && g.Role != "ControlPlane" {
			continue
		}
		for i := range g.MinSize {
			p.Members = append(p.Members, Member{Name: g.Name + "-" + itoa(i+1), Creds: p.Creds})
		}
	}
	if len(p.Members) == 0 {
		p.Members, p.MembersKnown = []Member{{Name: "control-plane", Creds: p.Creds}}, false
	}
	return p
}

// kopsDefaultIssuer is the issuer kops derives when kubeAPIServer.serviceAccountIssuer is unset
// (pkg/model/components/discovery.go): the discovery store's https URL, else the public API name
// when anonymous auth and 0.0.0.0/0 access allow a public JWKS, else api.internal.<cluster>.
func kopsDefaultIssuer(k input.KopsCluster) string {
	if st := k.DiscoveryStore; st != "" {
		switch {
		case strings.HasPrefix(st, "s3://"):
			bucket, key, _ := strings.Cut(strings.TrimPrefix(st, "s3://"), "/")
			return strings.TrimSuffix("https://"+bucket+".s3.<bucket-region>.amazonaws.com/"+key, "/")
		case strings.HasPrefix(st, "memfs://"):
			return "https://" + strings.TrimPrefix(st, "memfs://")
		}
		return st
	}
	public := k.AnonymousAuth != nil && *k.AnonymousAuth &&
		(slices.Contains(k.APIAccess, "0.0.0.0/0") || slices.Contains(k.APIAccess, "::/0"))
	if public && k.MasterPublicName != "" {
		return "https://" + k.MasterPublicName
	}
	return "https://api.internal." + k.Name
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
