// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"fmt"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/redact"
)

// facts is what the checks read: both planes, the roll and the inputs.
type facts struct {
	cur, pl       *Plane
	curSet, plSet *input.Set
	roll          roll
	capiVersion   string
	signer        Signer
	notes         []string
}

// check is one prediction: a pure function of the facts.
type check func(f *facts) []finding.Finding

// checks is the ordered list of predictions; no-change runs last, over the others' findings.
func checks() []check {
	return []check{rolloutPlanned, issuerDropsOld, issuerSwitch, issuerPlaceholder, issuerJoinDiffers,
		saKeyUnread, saSecretMissing, saKeyChange, audienceDropsOld, etcdBeforeDrain, lbNotReadyAware, inPlaceUpdate, legacyTokens,
		signerWithKeyFiles, signerMaxLifetime, signerSwitch, authnIssuerIsSAIssuer}
}

func removes(f *facts) bool {
	return slices.ContainsFunc(f.roll.Steps, func(s Step) bool { return s.Action == "remove" })
}

func rolloutPlanned(f *facts) []finding.Finding {
	if f.cur.Source == "kops" && len(f.roll.Rolled) > 0 {
		// kops update cluster --yes writes the new launch templates; the control-plane instances
		// run the new flags only once kops rolling-update cluster replaces them
		// (kops docs/operations/rolling-update.md; nodeup renders the flags at boot).
		return []finding.Finding{finding.New("rollout-planned", fmt.Sprintf(
			"The planned Cluster spec changes the API servers (%s): kops update cluster --yes writes new launch templates, and no control-plane instance runs them until kops rolling-update cluster --yes replaces it. Order: %s.",
			strings.Join(f.roll.Reasons, ", "), strings.Join(f.roll.Rolled, ", "))).On("", "Cluster/"+f.cur.Cluster)}
	}
	if f.cur.KCP == nil || len(f.roll.Rolled) == 0 {
		return nil
	}
	order := "adds a machine before it removes one (maxSurge 1)"
	if f.pl.KCP.MaxSurge == 0 {
		order = "removes a machine before it adds one (maxSurge 0)"
	}
	msg := fmt.Sprintf("%d of %d control-plane machines roll (%s); KubeadmControlPlane %s. Order: %s.",
		len(f.roll.Rolled), len(f.cur.Members), strings.Join(f.roll.Reasons, ", "), order, strings.Join(f.roll.Rolled, ", "))
	return []finding.Finding{finding.New("rollout-planned", msg).On("", "KubeadmControlPlane/"+f.pl.KCP.Name)}
}

func issuerDropsOld(f *facts) []finding.Finding {
	old, planned := f.cur.Creds.primary(), f.pl.Creds
	if slices.Contains(planned.Issuers, old) {
		return nil
	}
	msg := fmt.Sprintf("The planned primary issuer %s replaces %s, which the planned members do not keep: tokens pods hold are rejected until the kubelet refreshes them (about 0.8 × their lifetime, 48 min for 3607 s).",
		planned.primary(), old)
	return []finding.Finding{finding.New("issuer-change-drops-old", msg,
		finding.Evidence{Key: "current issuers", Value: strings.Join(f.cur.Creds.Issuers, ", ")},
		finding.Evidence{Key: "planned issuers", Value: strings.Join(planned.Issuers, ", ")})}
}

func issuerSwitch(f *facts) []finding.Finding {
	iss := f.pl.Creds.primary()
	if slices.Contains(f.cur.Creds.Issuers, iss) || f.pl.Rewrite != nil && f.cur.Rewrite != nil {
		return nil
	}
	if f.cur.MembersKnown && len(f.cur.Members) < 2 {
		return nil
	}
	msg := fmt.Sprintf("The new issuer %s becomes primary in the roll that first adds it; the current members accept only %s, so they reject tokens minted through a new member until they are replaced.",
		iss, strings.Join(f.cur.Creds.Issuers, ", "))
	if d := redact.LookalikeIn(iss, f.cur.Creds.Issuers...); d != "" {
		msg += " The two look alike: " + d + "."
	}
	if !f.cur.MembersKnown {
		msg += " (The input does not say how many members run; with one member there is no overlap.)"
	}
	return []finding.Finding{finding.New("issuer-switch-before-all-accept", msg)}
}

func issuerPlaceholder(f *facts) []finding.Finding {
	rw := f.pl.Rewrite
	if rw == nil {
		iss := f.pl.Creds.primary()
		if strings.HasPrefix(iss, "https://") {
			return nil
		}
		return []finding.Finding{finding.New("issuer-placeholder", fmt.Sprintf("The planned issuer %q is not an https URL: OIDC discovery and external verifiers cannot use it.", iss)).WithSeverity(catalogue.Warning)}
	}
	switch {
	case rw.InitOnly:
		return []finding.Finding{finding.New("issuer-placeholder", fmt.Sprintf(
			"The issuer %q is rewritten at boot by %q, which edits /run/kubeadm/kubeadm.yaml only: machines that join (every machine a roll adds) render from kubeadm-config and keep the placeholder.",
			rw.Raw, rw.Command))}
	default:
		return []finding.Finding{finding.New("issuer-placeholder", fmt.Sprintf(
			"The issuer %q is rewritten by %q after kubeadm starts the API server: until the kubelet restarts it with the rewritten manifest, the new member signs and accepts the placeholder.",
			rw.Raw, rw.Command)).WithSeverity(catalogue.Warning)}
	}
}

func issuerJoinDiffers(f *facts) []finding.Finding {
	pl := f.pl
	if pl.Source == "kubeadm" && pl.HasJoinConfig && !f.cur.Creds.equal(pl.Creds) {
		return []finding.Finding{finding.New("issuer-join-differs",
			"The planned ClusterConfiguration changes issuers, keys or audiences, but kubeadm join renders from the cluster's kubeadm-config ConfigMap (still the current values) unless kubeadm upgrade apply --config uploads the planned file first.").WithSeverity(catalogue.Warning)}
	}
	if pl.Creds.equal(pl.JoinCreds) {
		return nil
	}
	msg := fmt.Sprintf("The init machine runs issuer %s, machines that join run %s (kubeadm join renders from kubeadm-config, which KubeadmControlPlane fills from the spec).",
		pl.Creds.primary(), pl.JoinCreds.primary())
	if d := redact.LookalikeIn(pl.Creds.primary(), pl.JoinCreds.primary()); d != "" {
		msg += " The two look alike: " + d + "."
	}
	return []finding.Finding{finding.New("issuer-join-differs", msg)}
}

// saKeyUnread: a <cluster>-sa Secret without a key preflight can read leaves the signing key
// unjudged, which must not read as no change (a warning keeps --fail-on warning failing).
func saKeyUnread(f *facts) []finding.Finding {
	var fs []finding.Finding
	for _, side := range []struct {
		name string
		pl   *Plane
	}{{"current", f.cur}, {"planned", f.pl}} {
		if side.pl.KeyUnread == "" {
			continue
		}
		fs = append(fs, finding.New("sa-key-unread", fmt.Sprintf(
			"The %s side's %s has no tls.crt or tls.key (in data or stringData) that holds an RSA or ECDSA key: the signing key the roll uses is not judged.",
			side.name, side.pl.KeyUnread)))
	}
	return fs
}

// regeneratesSA reports whether Cluster API v regenerates a missing <cluster>-sa Secret (with
// a new key pair) once the control plane is initialized: up to v1.12; from v1.13 on
// (kubernetes-sigs/cluster-api#13175) KubeadmControlPlane sets CertificatesAvailable False and
// joins no new machine. ok is false when v is not a version.
func regeneratesSA(v string) (regenerates, ok bool) {
	pv, err := parseSemver(v)
	if err != nil {
		return false, false
	}
	return pv.less(1, 13, 0), true
}

// saSecretMissing: the live management cluster has no <cluster>-sa Secret. What the roll then
// does depends on the Cluster API version: a new key pair (v1.12 and before: sa-key-change
// follows) or a roll that stops before its first new machine (v1.13 on).
func saSecretMissing(f *facts) []finding.Finding {
	if f.pl.KCP == nil || f.pl.SAAbsent == "" {
		return nil
	}
	name := f.pl.SAAbsent
	const blocked = "KubeadmControlPlane sets CertificatesAvailable False (\"Cluster certificate for sa is not available, please check cluster certificate secrets\") and logs \"Certificates are missing or unknown, can't join a new machine\""
	regen, ok := regeneratesSA(f.capiVersion)
	var msg string
	switch {
	case f.capiVersion == "" || !ok:
		msg = fmt.Sprintf("The Secret %s is absent and the Cluster API version is unknown (give a clusterctl Provider list or --capi-version): up to v1.12 KubeadmControlPlane generates a new key pair, which every machine the roll adds signs with and the others do not verify; from v1.13 on the roll stops before its first new machine (%s).", name, blocked)
	case regen:
		msg = fmt.Sprintf("The Secret %s is absent: Cluster API %s generates a new service-account key pair on its next reconcile, and every machine the roll adds signs with it while the others do not verify it (sa-key-change). Restore the Secret from a machine's /etc/kubernetes/pki/sa.key and sa.pub before the roll.", name, f.capiVersion)
	default:
		msg = fmt.Sprintf("The Secret %s is absent: Cluster API %s no longer regenerates it once the control plane is initialized, so the roll stops before its first new machine: %s. Restore the Secret from a machine's /etc/kubernetes/pki/sa.key and sa.pub (type cluster.x-k8s.io/secret, keys tls.crt and tls.key).", name, f.capiVersion, blocked)
	}
	return []finding.Finding{finding.New("sa-secret-missing", msg).On("", "Secret/"+name)}
}

func saKeyChange(f *facts) []finding.Finding {
	sign := f.pl.JoinCreds.Signing
	if f.pl.SAAbsent != "" {
		// The key a regenerating Cluster API makes is new by definition; a later one makes none,
		// and with the version unknown sa-secret-missing names both outcomes.
		if regen, ok := regeneratesSA(f.capiVersion); !ok || !regen {
			return nil
		}
		return []finding.Finding{finding.New("sa-key-change", fmt.Sprintf(
			"Cluster API %s generates a new key pair for the absent Secret %s: every machine the roll adds signs with it, and the members not yet replaced (they verify %s), and external verifiers of the JWKS, reject tokens minted through the new ones.",
			f.capiVersion, f.pl.SAAbsent, strings.Join(f.cur.Creds.Verify, ", ")))}
	}
	if slices.Contains(f.cur.Creds.Verify, sign) || f.cur.KeyUnread != "" || f.pl.KeyUnread != "" ||
		(endpoint(f.cur) == "") != (endpoint(f.pl) == "") { // a signer turned on or off: signer-switch-without-old-keys
		return nil
	}
	msg := fmt.Sprintf("The planned members sign with %s, which the current members do not verify (they verify %s): members not yet updated, and external verifiers of the JWKS, reject tokens minted through updated ones.",
		sign, strings.Join(f.cur.Creds.Verify, ", "))
	if f.cur.LiveKeys && strings.HasPrefix(sign, "kid:") {
		msg = fmt.Sprintf("The %s-sa Secret's key (%s) is not in the members' live JWKS (%s): every machine the roll adds signs with it, and the members not yet replaced, and external verifiers of the JWKS, reject tokens minted through the new ones.",
			f.cur.Cluster, sign, strings.Join(f.cur.Creds.Verify, ", "))
	}
	return []finding.Finding{finding.New("sa-key-change", msg)}
}

func audienceDropsOld(f *facts) []finding.Finding {
	cur, pl := f.cur.Creds.Audiences, f.pl.JoinCreds.Audiences
	var dropped []string
	for _, a := range cur {
		// The current primary issuer as an audience, dropped with the issuer itself: the tokens
		// that carry it fail on their issuer first, which issuer-change-drops-old reports
		// (the lab's issuer-change scenario logs only the bare "invalid bearer token").
		if a == f.cur.Creds.primary() && !slices.Contains(f.pl.JoinCreds.Issuers, a) {
			continue
		}
		if !slices.Contains(pl, a) {
			dropped = append(dropped, a)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	keep := slices.ContainsFunc(cur, func(a string) bool { return slices.Contains(pl, a) })
	msg := fmt.Sprintf("The planned API audiences %s drop %s.", strings.Join(pl, ", "), strings.Join(dropped, ", "))
	out := finding.New("audience-change-drops-old", msg+" No current audience is kept: every token minted before is rejected until refreshed.")
	if keep {
		out = finding.New("audience-change-drops-old", msg+" Tokens requested for a dropped audience are rejected.").WithSeverity(catalogue.Warning)
	}
	return []finding.Finding{out}
}

// fixedEtcdOrder: Cluster API removes the etcd member after drain from v1.8.2 (#11136) and v1.9.0 (#11137).
func fixedEtcdOrder(v string) (fixed, ok bool) {
	pv, err := parseSemver(v)
	if err != nil {
		return false, false
	}
	return !pv.less(1, 8, 2), true
}

func etcdBeforeDrain(f *facts) []finding.Finding {
	if f.cur.KCP == nil || !removes(f) || f.pl.ExternalEtcd {
		return nil
	}
	if f.capiVersion == "" {
		f.notes = append(f.notes, "Cluster API version unknown: etcd-removed-before-drain not judged (give a clusterctl Provider list or --capi-version)")
		return nil
	}
	fixed, ok := fixedEtcdOrder(f.capiVersion)
	if !ok {
		f.notes = append(f.notes, "Cluster API version "+f.capiVersion+" not understood: etcd-removed-before-drain not judged")
		return nil
	}
	if fixed {
		return nil
	}
	return []finding.Finding{finding.New("etcd-removed-before-drain", fmt.Sprintf(
		"Cluster API %s removes each old machine's etcd member before draining it; its kube-apiserver (local etcd only) keeps serving without storage during the drain of: %s.",
		f.capiVersion, strings.Join(f.roll.Rolled, ", ")))}
}

func lbNotReadyAware(f *facts) []finding.Finding {
	if !removes(f) {
		return nil
	}
	lbs := f.plSet.LBChecks
	if len(lbs) == 0 {
		lbs = f.curSet.LBChecks
	}
	for _, lb := range lbs {
		desc, bad := lbVerdict(lb, infraVersion(f, lb.Kind))
		if desc == "" {
			f.notes = append(f.notes, lb.Kind+" "+lb.Name+": health check not stated and provider version unknown: lb-check-not-ready-aware not judged")
			continue
		}
		if bad && f.capiVersion != "" {
			// From v1.14.0 the drain runs once (#11590) and the pre-terminate hook then removes
			// the etcd member just before the infrastructure machine is deleted (and
			// deregistered): the lab measured the storage-less member in rotation for under its
			// 500 ms look (v1.14.2, TCP). Before, the core manager drained again on every
			// reconcile, through the balancer to the storage-less member, and the machine stayed
			// 1m40s (v1.8.4 behind TLS; docs/lab-capi-scenarios.md).
			if v, err := parseSemver(f.capiVersion); err == nil && !v.less(1, 14, 0) {
				f.notes = append(f.notes, fmt.Sprintf("%s %s checks members with %s, not HTTPS /readyz; Cluster API %s drains once and removes the etcd member just before the machine is deleted and deregistered, so the roll leaves no storage-less member in rotation (lb-check-not-ready-aware not raised). A member that hangs while listening still passes such a check.",
					lb.Kind, lb.Name, desc, f.capiVersion))
				continue
			}
		}
		if bad {
			return []finding.Finding{finding.New("lb-check-not-ready-aware", fmt.Sprintf(
				"The control-plane load balancer of %s %s checks members with %s, not HTTPS /readyz: a member without etcd or shutting down stays in rotation during the roll.", lb.Kind, lb.Name, desc)).
				On("", lb.Kind+"/"+lb.Name)}
		}
	}
	return nil
}

// lbVerdict describes a health check and says whether it ignores readiness; "" when unknown.
// version is the provider's (clusterctl inventory), "" unknown. What each provider builds when
// its cluster object does not say (the sources, in docs/preflight.md):
//   - CAPA: TCP:6443 (classic ELB from v2.8.1, NLB always) or SSL:6443 (classic ELB before
//     v2.8.1); /readyz only with healthCheckProtocol HTTP or HTTPS;
//   - CAPZ: an HTTPS /readyz probe from v1.10.0, TCP before;
//   - CAPV: kube-vip's VIP follows a lease its holder renews through its own apiserver, no check;
//   - CAPO: an Octavia TCP monitor (no type field);
//   - CAPH: the Hetzner load balancer's own TCP check unless healthCheck says http(s).
func lbVerdict(lb input.LBCheck, version string) (string, bool) {
	switch {
	case lb.Target != "":
		return lb.Target, !(lb.Protocol == "HTTPS" || lb.Protocol == "HTTP") || lb.Path != "/readyz"
	case lb.Protocol == "TCP" || lb.Protocol == "SSL":
		return lb.Protocol, true
	case lb.Protocol == "HTTP" || lb.Protocol == "HTTPS":
		p := lb.Path
		if p == "" && lb.Kind != "HetznerCluster" {
			p = "/readyz" // CAPA's path for HTTP(S) checks (DefaultAPIServerHealthCheckPath)
		}
		return lb.Protocol + " " + p, p != "/readyz"
	}
	switch lb.Kind {
	case "AWSCluster":
		if strings.HasSuffix(lb.APIVersion, "/v1beta1") {
			return "the CAPA v1.x default (classic ELB SSL:6443, no /readyz)", true
		}
		if v, err := parseSemver(version); err == nil {
			if v.less(2, 8, 1) {
				return "the CAPA " + version + " default for an unset healthCheckProtocol (classic ELB SSL:6443, NLB TCP:6443)", true
			}
			return "the CAPA " + version + " default for an unset healthCheckProtocol (TCP:6443)", true
		}
		return "CAPA's default for an unset healthCheckProtocol (TCP:6443, or SSL:6443 on a classic ELB before v2.8.1; /readyz only with HTTP or HTTPS)", true
	case "AzureCluster":
		v, err := parseSemver(version)
		if err != nil {
			return "", false
		}
		if v.less(1, 10, 0) {
			return "the CAPZ " + version + " TCP probe", true
		}
		return "HTTPS /readyz (CAPZ " + version + ")", false
	case "VSphereCluster":
		return "kube-vip (CAPV's template: the VIP follows a lease its holder renews through its own apiserver; no readiness check)", true
	case "OpenStackCluster":
		return "an Octavia TCP monitor (CAPO builds no other)", true
	case "HetznerCluster":
		return "the Hetzner load balancer's own TCP check (CAPH: no healthCheck set)", true
	}
	return "", false
}

// infraVersion is the version clusterctl's inventory gives the infrastructure provider of a
// provider cluster kind ("" when the inventory does not list it).
func infraVersion(f *facts, kind string) string {
	name := map[string]string{"AWSCluster": "aws", "AzureCluster": "azure", "VSphereCluster": "vsphere",
		"OpenStackCluster": "openstack", "HetznerCluster": "hetzner"}[kind]
	for _, s := range []*input.Set{f.plSet, f.curSet} {
		for _, p := range s.Providers {
			if p.Type == "InfrastructureProvider" && (name == "" || p.Name == name) {
				return p.Version
			}
		}
	}
	return ""
}

func legacyTokens(f *facts) []finding.Finding {
	var names []string
	for _, o := range append(slices.Clone(f.curSet.LegacyToken), f.plSet.LegacyToken...) {
		names = append(names, o.Name)
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	names = slices.Compact(names)
	msg := fmt.Sprintf("%d kubernetes.io/service-account-token Secret(s) hold tokens that never refresh: %s.", len(names), strings.Join(names, ", "))
	out := finding.New("legacy-token-secrets", msg)
	if slices.Contains(f.pl.Creds.Verify, f.cur.Creds.Signing) {
		return []finding.Finding{out.WithSeverity(catalogue.Info)}
	}
	return []finding.Finding{finding.New("legacy-token-secrets", msg+" The planned members no longer verify the current signing key: they break for good.")}
}

// noChange says so when no prediction above warns, with what was compared.
func noChange(f *facts, fs []finding.Finding) []finding.Finding {
	if slices.ContainsFunc(fs, func(x finding.Finding) bool { return x.Severity.AtLeast(catalogue.Warning) }) ||
		!f.cur.Creds.equal(f.pl.Creds) {
		return nil
	}
	c := f.pl.Creds
	msg := fmt.Sprintf("Compared issuers (%s), API audiences (%s), signing key (%s), verify keys (%s)",
		strings.Join(c.Issuers, ", "), strings.Join(c.Audiences, ", "), c.Signing, strings.Join(c.Verify, ", "))
	if f.cur.KCP != nil {
		msg += ", the roll's etcd order and load-balancer check"
	}
	return []finding.Finding{finding.New("no-change", msg+": nothing that decides which tokens are accepted changes.")}
}

func providerVersion(f *facts, typ string) string {
	for _, s := range []*input.Set{f.plSet, f.curSet} {
		for _, p := range s.Providers {
			if p.Type == typ {
				return p.Version
			}
		}
	}
	return ""
}
