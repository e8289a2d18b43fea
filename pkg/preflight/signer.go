// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// The external JWT signer (KEP-740, GA and locked on in 1.36) and the structured
// authentication configuration (KEP-3331, GA in 1.34), as a roll changes them. Sources, at
// k8s.io/kubernetes v1.36.3:
//   - cmd/kube-apiserver/app/server.go:104-110 completes the options, then validates them;
//   - pkg/controlplane/apiserver/options/options.go:306-308 refuses --service-account-signing-key-file
//     beside the endpoint, and :318-337 dials the signer, asks its Metadata and refuses a max
//     token life below validation.MinTokenAgeSec (pkg/apis/authentication/validation/validation.go:26,
//     600 s) or below a --service-account-max-token-expiration that is set;
//   - pkg/controlplane/apiserver/options/validation.go:99-100 refuses --service-account-key-file
//     (or the signing key file) beside the endpoint;
//   - cmd/kubeadm/app/phases/controlplane/manifests.go:190-191 writes both key-file flags into every
//     kube-apiserver manifest and :335 --service-account-private-key-file into kube-controller-manager's;
//     extraArgs replace a flag of the same name (cmd/kubeadm/app/util/arguments.go:36-63) but cannot
//     remove one, and --service-account-key-file is a string array (pkg/kubeapiserver/options/
//     authentication.go:432): an empty value is still one key file;
//   - staging/src/k8s.io/apiserver/pkg/apis/apiserver/validation/validation.go:158-162 refuses a JWT
//     issuer URL equal to a service-account issuer, at start (pkg/kubeapiserver/options/
//     authentication.go:604) and on reload (:796, the old configuration stays).

// minSignerLifetime is validation.MinTokenAgeSec: the shortest max token life kube-apiserver
// accepts from a signer's Metadata.
const minSignerLifetime = 600 * time.Second

// Signer is what preflight is told of the planned members' external signer: preflight never
// calls it.
type Signer struct {
	// MaxTokenExpiration is the signer's Metadata max_token_expiration_seconds; 0: not known.
	MaxTokenExpiration time.Duration
}

const (
	flagEndpoint   = "service-account-signing-endpoint"
	flagKeyFile    = "service-account-key-file"
	flagSigningKey = "service-account-signing-key-file"
	flagKCMKey     = "service-account-private-key-file"
	flagAuthn      = "authentication-config"
	flagMaxExp     = "service-account-max-token-expiration"
)

func last(a input.Args, name string) (string, bool) {
	v, ok := a[name]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// endpoint is the signer socket p's members name, "" for key files.
func endpoint(p *Plane) string {
	v, _ := last(p.RawArgs, flagEndpoint)
	return v
}

// keyFlags is what p's kube-apiserver runs of the key-file flags: the flags, and how preflight
// knows (for kubeadm: what kubeadm writes and a patch or command that edits the manifest).
type keyFlags struct {
	flags []string
	// unverified says why preflight cannot tell whether the flags are removed ("" it can).
	unverified string
	// removedBy names what removes them ("" nothing).
	removedBy string
}

// apiserverKeyFlags: for a static pod, the manifest's flags; for kubeadm and KCP, the two flags
// kubeadm always writes (an empty --service-account-signing-key-file in extraArgs unsets that
// one), unless a kube-apiserver patch or a postKubeadmCommands edit removes them.
func apiserverKeyFlags(p *Plane, s *input.Set) keyFlags {
	var k keyFlags
	if p.Source == "static-pod" {
		if _, ok := p.RawArgs[flagKeyFile]; ok {
			k.flags = append(k.flags, "--"+flagKeyFile)
		}
		if v, _ := last(p.RawArgs, flagSigningKey); v != "" {
			k.flags = append(k.flags, "--"+flagSigningKey)
		}
		return k
	}
	k.flags = []string{"--" + flagKeyFile}
	if v, ok := last(p.RawArgs, flagSigningKey); !ok || v != "" {
		k.flags = append(k.flags, "--"+flagSigningKey)
	}
	k.removedBy, k.unverified = manifestEdit(p, s, "kube-apiserver", flagKeyFile)
	return k
}

// kcmKeyFile reports whether p's kube-controller-manager runs --service-account-private-key-file
// (known false when preflight cannot tell).
func kcmKeyFile(p *Plane, s *input.Set) (runs, known bool) {
	switch p.Source {
	case "static-pod":
		for _, m := range s.ControllerManagers {
			if v := m.Flags.Last(flagKCMKey); v != "" {
				return true, true
			}
		}
		return false, len(s.ControllerManagers) > 0
	case "kubeadm", "kubeadmcontrolplane":
		a := kcmArgs(s)
		if v, ok := last(a, flagKCMKey); ok && v == "" {
			return false, true
		}
		if by, unverified := manifestEdit(p, s, "kube-controller-manager", flagKCMKey); by != "" || unverified != "" {
			return false, false
		}
		return true, true
	}
	return false, false
}

func kcmArgs(s *input.Set) input.Args {
	if len(s.KCPs) > 0 {
		if cc := s.KCPs[0].Spec.ClusterConfiguration; cc != nil {
			return cc.ControllerManager.ExtraArgs
		}
		return nil
	}
	for _, f := range s.Kubeadm {
		if f.Cluster != nil {
			return f.Cluster.ControllerManager.ExtraArgs
		}
	}
	return nil
}

// manifestEdit looks for what edits component's kubeadm manifest: a patch in a KCP's files
// under its init or join patches directory that edits the container's command, or a
// postKubeadmCommands line that names flag. A plain kubeadm patches directory is on the host,
// which preflight never reads: unverified.
func manifestEdit(p *Plane, s *input.Set, component, flag string) (removedBy, unverified string) {
	if p.KCP != nil {
		spec := p.KCP.Spec
		for _, dir := range []string{spec.InitConfiguration.PatchDir(), spec.JoinConfiguration.PatchDir()} {
			if dir == "" {
				continue
			}
			for _, f := range spec.Files {
				if path.Dir(f.Path) != path.Clean(dir) || !strings.HasPrefix(path.Base(f.Path), component) {
					continue
				}
				if t := f.Text(); strings.Contains(t, "command") && !strings.Contains(t, "--"+flag) {
					return "the patch " + f.Path, ""
				}
			}
		}
		for _, c := range spec.PostKubeadmCommands {
			if strings.Contains(c, flag) && strings.Contains(c, component) {
				return "the postKubeadmCommands line " + fmt.Sprintf("%q", c), ""
			}
		}
		return "", ""
	}
	for _, f := range s.Kubeadm {
		if d := f.Node.PatchDir(); d != "" {
			return "", "its " + f.Kind + " names the patches directory " + d + ", on the host, which preflight does not read"
		}
	}
	return "", ""
}

// signerWithKeyFiles: planned members that name a signer and still run key files refuse to
// start; a kube-controller-manager that still signs legacy tokens with a key file signs tokens
// no member verifies.
func signerWithKeyFiles(f *facts) []finding.Finding {
	ep := endpoint(f.pl)
	if ep == "" {
		return nil
	}
	k := apiserverKeyFlags(f.pl, f.plSet)
	kcm, kcmKnown := kcmKeyFile(f.pl, f.plSet)
	kcmMsg := ""
	if kcm && !signerServes(f) {
		kcmMsg = fmt.Sprintf(" kube-controller-manager still runs --%s (kubeadm writes it: cmd/kubeadm/app/phases/controlplane/manifests.go:335): its legacy token controller signs Secret tokens with a key the members, which verify only the signer's keys, do not know; set controllerManager.extraArgs %s to \"\" (the controller is then off) or serve that key's public half from the signer.", flagKCMKey, flagKCMKey)
		if f.pl.Source == "static-pod" {
			kcmMsg = fmt.Sprintf(" kube-controller-manager still runs --%s: its legacy token controller signs Secret tokens with a key the members, which verify only the signer's keys, do not know; remove the flag from its manifest (the controller is then off) or serve that key's public half from the signer.", flagKCMKey)
		}
	}
	if !kcmKnown && f.pl.Source == "static-pod" {
		f.notes = append(f.notes, "No kube-controller-manager manifest on the planned side: whether it still signs legacy tokens with --"+flagKCMKey+" is not judged (signer-with-key-files)")
	}
	if k.removedBy != "" {
		f.notes = append(f.notes, fmt.Sprintf("The planned kube-apiserver names the signer %s; %s edits its command, which preflight takes to remove %s (signer-with-key-files not raised)",
			ep, k.removedBy, strings.Join(k.flags, " and ")))
	}
	what := f.pl.Source
	switch {
	case len(k.flags) > 0 && k.removedBy == "" && k.unverified == "":
		// Options are completed before they are validated (cmd/kube-apiserver/app/server.go:104-110):
		// a signing key file fails in completion, a key file alone in validation.
		refusal := "\"can't set `--service-account-signing-key-file` and/or `--service-account-key-file` with `--service-account-signing-endpoint` (They are mutually exclusive)\""
		if slices.Contains(k.flags, "--"+flagSigningKey) {
			refusal = "\"service-account-signing-key-file and service-account-signing-endpoint are mutually exclusive and cannot be set at the same time\""
		}
		msg := fmt.Sprintf("The planned kube-apiserver names the signer %s and runs %s: it refuses to start (%s), so the roll stops at its first new member.",
			ep, strings.Join(k.flags, " and "), refusal)
		if what != "static-pod" {
			msg += " kubeadm writes both key-file flags into every kube-apiserver manifest (cmd/kubeadm/app/phases/controlplane/manifests.go:190-191) and extraArgs cannot remove them: a kubeadm patch on kube-apiserver (init and join patches.directory) must."
		}
		return []finding.Finding{finding.New("signer-with-key-files", msg+kcmMsg)}
	case len(k.flags) > 0 && k.unverified != "":
		return []finding.Finding{finding.New("signer-with-key-files", fmt.Sprintf(
			"The planned kube-apiserver names the signer %s, and kubeadm writes %s into its manifest; %s, so whether a patch removes them is not judged: give the patched kube-apiserver manifest (kubeadm init phase control-plane apiserver --dry-run) as a static-pod input.%s",
			ep, strings.Join(k.flags, " and "), k.unverified, kcmMsg)).WithSeverity(catalogue.Warning)}
	case kcmMsg != "":
		return []finding.Finding{finding.New("signer-with-key-files", strings.TrimSpace(kcmMsg)).WithSeverity(catalogue.Warning)}
	}
	return nil
}

// signerServes reports whether the planned signer's JWKS holds the <cluster>-sa Secret's key,
// the one kubeadm's kube-controller-manager signs legacy tokens with (unknown elsewhere: false).
func signerServes(f *facts) bool {
	var sa []string
	for _, s := range []*input.Set{f.plSet, f.curSet} {
		for _, sec := range s.SASecrets {
			if sec.KeyID != "" {
				sa = append(sa, sec.KeyID)
			}
		}
	}
	for _, j := range f.plSet.JWKS {
		if slices.ContainsFunc(j.KeyIDs(), func(id string) bool { return slices.Contains(sa, id) }) {
			return true
		}
	}
	return false
}

// signerMaxLifetime: the planned signer's declared max token life against kube-apiserver's
// floor (600 s) and the planned --service-account-max-token-expiration.
func signerMaxLifetime(f *facts) []finding.Finding {
	sg := f.signer
	ep := endpoint(f.pl)
	if ep == "" {
		return nil
	}
	if sg.MaxTokenExpiration <= 0 {
		f.notes = append(f.notes, "The planned signer's max token lifetime was not given (--signer-max-token-expiration): signer-max-lifetime-too-short not judged")
		return nil
	}
	secs := int64(sg.MaxTokenExpiration / time.Second)
	if sg.MaxTokenExpiration < minSignerLifetime {
		return []finding.Finding{finding.New("signer-max-lifetime-too-short", fmt.Sprintf(
			"The signer %s declares a max token life of %ds: the planned kube-apiserver does not start (\"max token life supported by external-jwt-signer (%ds) is less than acceptable (min %ds)\"; k8s.io/kubernetes v1.36.3 pkg/controlplane/apiserver/options/options.go:329-330).",
			ep, secs, secs, int64(minSignerLifetime/time.Second)))}
	}
	v, ok := last(f.pl.RawArgs, flagMaxExp)
	if !ok {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		f.notes = append(f.notes, fmt.Sprintf("--%s %q is not a duration: signer-max-lifetime-too-short not judged against it", flagMaxExp, v))
		return nil
	}
	if d > sg.MaxTokenExpiration {
		return []finding.Finding{finding.New("signer-max-lifetime-too-short", fmt.Sprintf(
			"The planned --%s %s is longer than the %ds the signer %s declares: the planned kube-apiserver does not start (\"service-account-max-token-expiration cannot be set longer than the token expiration supported by service-account-signing-endpoint: %s > %s\"; options.go:336-337).",
			flagMaxExp, d, secs, ep, d, sg.MaxTokenExpiration))}
	}
	return nil
}

// sideKeys are the kids a side's members verify, and the one they sign with ("" unknown); ok
// is false when preflight does not know them: a JWKS document of the side, else the kids the
// side's key files resolved to (the <cluster>-sa Secret, a spec file's PEM).
func sideKeys(p *Plane, s *input.Set) (verify []string, signing string, ok bool) {
	for _, j := range s.JWKS {
		verify = append(verify, j.KeyIDs()...)
	}
	if len(verify) > 0 {
		slices.Sort(verify)
		verify = slices.Compact(verify)
		if endpoint(p) == "" && len(verify) == 1 {
			signing = verify[0]
		}
		return verify, signing, true
	}
	for _, v := range p.Creds.Verify {
		id, isKid := strings.CutPrefix(v, "kid:")
		if !isKid {
			return nil, "", false
		}
		verify = append(verify, id)
	}
	signing, _ = strings.CutPrefix(p.Creds.Signing, "kid:")
	return verify, signing, len(verify) > 0
}

// signerKeysUnknown names the keys of signer members whose side gives no JWKS.
const signerKeysUnknown = "external signer's keys (no JWKS given)"

// signerCreds names the keys of members that run a signer, so the trust matrix compares them:
// its JWKS's kids when the side gives one (the first is taken to be the one it signs with), else
// the signer itself. When the other side runs a signer, a key-file side with a JWKS is named by
// its kids too, so both sides compare in one currency.
func signerCreds(p *Plane, s *input.Set, otherSigner bool) {
	ep := endpoint(p)
	if ep == "" && !otherSigner {
		return
	}
	var kids []string
	for _, j := range s.JWKS {
		kids = append(kids, j.KeyIDs()...)
	}
	var sign string
	var verify []string
	switch {
	case len(kids) > 0:
		sign = "kid:" + kids[0]
		for _, k := range kids {
			verify = append(verify, "kid:"+k)
		}
		verify = slices.Compact(verify)
	case ep != "":
		// Each member has its own signer socket: the path says nothing of the keys.
		sign = signerKeysUnknown
		verify = []string{sign}
	default:
		return
	}
	set := func(c *Creds) { c.Signing, c.Verify = sign, slices.Clone(verify) }
	set(&p.Creds)
	set(&p.JoinCreds)
	for i := range p.Members {
		set(&p.Members[i].Creds)
	}
}

// signerSwitch: a roll that turns a signer on (or off) where the members on the two sides do
// not verify each other's keys.
func signerSwitch(f *facts) []finding.Finding {
	curE, plE := endpoint(f.cur), endpoint(f.pl)
	if (curE == "") == (plE == "") {
		return nil
	}
	dir := fmt.Sprintf("The roll turns the external signer %s on: the current members verify their key files", plE)
	if plE == "" {
		dir = fmt.Sprintf("The roll turns the external signer %s off: the planned members verify their key files", curE)
	}
	oldV, _, oldOK := sideKeys(f.cur, f.curSet)
	newV, newSign, newOK := sideKeys(f.pl, f.plSet)
	if !oldOK || !newOK {
		var need []string
		if !oldOK {
			need = append(need, "the current members' keys")
		}
		if !newOK {
			need = append(need, "the planned members' keys")
		}
		return []finding.Finding{finding.New("signer-switch-without-old-keys", fmt.Sprintf(
			"%s. Whether each side verifies the other's tokens is not judged: %s are not in the input. Give each side's public keys as a JWKS document: the signer's FetchKeys set on its side, the key-file members' /openid/v1/jwks (kubectl get --raw /openid/v1/jwks) on theirs.",
			dir, strings.Join(need, " and "))).WithSeverity(catalogue.Warning)}
	}
	var missing, foreign []string
	for _, k := range oldV {
		if !slices.Contains(newV, k) {
			missing = append(missing, k)
		}
	}
	for _, k := range newV {
		if !slices.Contains(oldV, k) {
			foreign = append(foreign, k)
		}
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("the planned members do not verify %s, so they reject the tokens pods hold and every token the current members mint until the last is replaced", strings.Join(missing, ", ")))
	}
	switch {
	case newSign != "" && !slices.Contains(oldV, newSign):
		problems = append(problems, fmt.Sprintf("the planned members sign with %s, which the current members do not verify: they reject every token minted through a new member", newSign))
	case newSign == "" && len(foreign) == len(newV):
		problems = append(problems, fmt.Sprintf("no key of the planned members (%s) is one the current members verify: they reject every token minted through a new member", strings.Join(newV, ", ")))
	}
	if len(problems) > 0 {
		return []finding.Finding{finding.New("signer-switch-without-old-keys", fmt.Sprintf("%s. During the roll %s (\"invalid signature, no keys found\").",
			dir, strings.Join(problems, "; ")),
			finding.Evidence{Key: "current keys", Value: strings.Join(oldV, ", ")},
			finding.Evidence{Key: "planned keys", Value: strings.Join(newV, ", ")})}
	}
	if len(foreign) > 0 && newSign == "" {
		return []finding.Finding{finding.New("signer-switch-without-old-keys", fmt.Sprintf(
			"%s. The planned signer also serves %s, which the current members do not verify: if it signs with one of them, they reject those tokens until the last is replaced.",
			dir, strings.Join(foreign, ", "))).WithSeverity(catalogue.Warning)}
	}
	return nil
}

// authnIssuerIsSAIssuer: an AuthenticationConfiguration whose JWT issuer is one of the planned
// service-account issuers is refused.
func authnIssuerIsSAIssuer(f *facts) []finding.Finding {
	file, ok := last(f.pl.RawArgs, flagAuthn)
	if !ok {
		if len(f.plSet.AuthnConfigs) > 0 {
			f.notes = append(f.notes, "An AuthenticationConfiguration is given on the planned side, but the planned kube-apiserver runs no --authentication-config: it is not read")
		}
		return nil
	}
	cfgs := authnConfigs(f.pl, f.plSet, file)
	from := "planned"
	if len(cfgs) == 0 {
		cfgs, from = authnConfigs(f.cur, f.curSet, file), "current"
	}
	if len(cfgs) == 0 {
		f.notes = append(f.notes, "The planned kube-apiserver reads --authentication-config "+file+", which is not in the input (give the file as a document; preflight never reads a host path): authn-config-issuer-is-sa-issuer not judged")
		return nil
	}
	var fs []finding.Finding
	for _, c := range cfgs {
		for _, iss := range c.Issuers {
			if !slices.Contains(f.pl.JoinCreds.Issuers, iss) && !slices.Contains(f.pl.Creds.Issuers, iss) {
				continue
			}
			msg := fmt.Sprintf("The AuthenticationConfiguration in %s (the %s side's; the planned kube-apiserver reads it from %s) trusts the JWT issuer %s, which is a planned --service-account-issuer: it is refused (\"URL must not overlap with disallowed issuers: %s\"). A member started with it does not start (\"invalid authentication configuration\"); a member that reloads it logs \"failed to validate authentication config\" and silently keeps its old configuration.",
				c.File, from, file, iss, "["+strings.Join(sorted(f.pl.Creds.Issuers), " ")+"]")
			fs = append(fs, finding.New("authn-config-issuer-is-sa-issuer", msg))
		}
	}
	return fs
}

// authnConfigs are the AuthenticationConfigurations of p: the side's documents, or for a
// KubeadmControlPlane the file of its spec at the path the flag names.
func authnConfigs(p *Plane, s *input.Set, file string) []input.AuthnConfig {
	out := slices.Clone(s.AuthnConfigs)
	if p.KCP == nil {
		return out
	}
	for _, f := range p.KCP.Spec.Files {
		if f.Path != file || f.ContentFrom != nil {
			continue
		}
		c, err := input.ParseAuthnConfig(input.Object{File: p.KCP.File, Line: p.KCP.Line, Kind: "AuthenticationConfiguration"}, []byte(f.Text()))
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("%s file %s: %v", p.KCP.Object, f.Path, err))
			continue
		}
		c.File = p.KCP.File + " (kubeadmConfigSpec.files " + f.Path + ")"
		out = append(out, c)
	}
	return out
}
