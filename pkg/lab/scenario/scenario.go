// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/report"
)

// Scenario is one fault from the field, reproduced on a running lab.
type Scenario struct {
	Name    string
	Summary string
	// Environment is what the scenario runs in, and brings it up and down for Run.
	Environment Environment
	// Members is the smallest lab the scenario needs (default 2).
	Members int
	// Run performs the scenario on env.Lab and returns what it saw. It leaves the lab usable for the
	// next scenario where it can (members it added are removed again). A CloudEra scenario has
	// none: its steps are the credwatch-cloudlab program's.
	Run func(ctx context.Context, env *Env) (*Evidence, error)
	// Notes explain the evidence the same way on every run (what it means, what fixes it); they
	// open Evidence.Notes, and Run adds what it learned on this run.
	Notes []string
	// Offline, for a scenario no plan shows (its failure happens at run time), says why preflight
	// cannot predict it and what names it instead; the prediction table lists it so.
	Offline string
}

// All is the registry: every scenario, in the order they are documented.
func All() []Scenario {
	return []Scenario{
		{Name: "healthy-roll", Summary: "every member replaced one by one with the shared key and issuer: no 401s", Environment: PlainLab{}, Run: healthyRoll, Notes: []string{
			"The tenant re-mints its tokens every 3 s through the load balancer, so tokens minted by old and new members are both in use during the roll.",
			"Requests without a response are connections cut while a member stopped; they are not authentication failures.",
		}},
		{Name: "key-drift", Summary: "a new member with its own service-account key joins the load balancer", Environment: PlainLab{}, Run: keyDrift, Notes: []string{
			"Tokens minted by an original member fail on the new member; tokens the new member mints fail on every original member. Through a round-robin load balancer both look intermittent.",
			"Fix: give the new member the shared sa.key/sa.pub (or add every public key in use to --service-account-key-file on all members).",
		}},
		{Name: "issuer-change", Summary: "a new member whose first issuer differs, without and then with the old issuer kept", Environment: PlainLab{}, Run: issuerChange, Notes: []string{
			"A token whose iss is not one of the member's --service-account-issuer values is skipped silently by the service-account authenticators, so the member logs only the bare \"invalid bearer token\".",
			"Keeping the old issuer as a second value keeps old tokens working on the new member, but the tokens it mints carry the new issuer (the first value) and the original members reject them until they list it too: add the new issuer to every member before making it the first.",
		}},
		{Name: "audience-change", Summary: "a new member with different --api-audiences", Environment: PlainLab{}, Run: audienceChange, Notes: []string{
			"The tenants' tokens carry the API audiences of the member that minted them (the issuer, when --api-audiences is unset); a member with other API audiences rejects them, and the original members reject the tokens it mints.",
		}},
		{Name: "bound-object-deleted", Summary: "a pod is deleted while its token is still in use", Environment: PlainLab{}, Run: boundObjectDeleted, Notes: []string{
			"Each member keeps accepting a token it has already accepted for up to 10 s (--token-success-cache-ttl); after that the bound-object lookup fails and the token is rejected.",
			"The validator masks why the lookup failed (NotFound or a timeout both read \"has been invalidated\"); a pod in graceful deletion keeps working tokens for 60 s after its deletionTimestamp.",
		}},
		{Name: "serviceaccount-recreated", Summary: "a service account is deleted and re-created with the same name", Environment: PlainLab{}, Run: serviceAccountRecreated, Notes: []string{
			"Tokens name the service account's UID; after re-creation every member rejects them until the kubelet mints new ones (at 80 % of the lifetime, or when the pod restarts).",
		}},
		{Name: "clock-skew", Summary: "tokens from a member whose clock runs ahead (or behind) are presented to the others", Environment: PlainLab{}, Run: clockSkew, Notes: []string{
			"Go binaries ignore libfaketime and Linux time namespaces do not shift the wall clock, so the tokens are produced the way a skewed member would: the real claims of a pod-bound token, signed with the lab's shared key, with iat/nbf/exp shifted.",
			"kube-apiserver allows 60 s of leeway both ways and checks nbf, then exp, then iat; since it always sets iat = nbf, a member ahead shows up as \"not valid yet\", never as \"issued in the future\".",
		}},
		{Name: "etcd-member-removed", Summary: "a member's etcd member is removed while the load balancer keeps sending to its apiserver", Environment: PlainLab{}, Run: etcdMemberRemoved, Notes: []string{
			"The apiserver whose etcd member is gone keeps authenticating from its informer caches; only cache misses (objects created after the removal) make it read through its own etcd, and those requests wait for the request deadline.",
			"Only clients the load balancer routes to that member see failures; a load balancer that checks /readyz takes it out.",
		}},
		{Name: "mixed-version-roll", Summary: "an old-line control plane replaced by new-line members one by one", Environment: PlainLab{Version: lab.OldVersion}, Run: mixedVersionRoll, Notes: []string{
			"The tenant re-mints its tokens every 3 s through the load balancer, so tokens minted by old and new members are both in use during the roll.",
			"Requests without a response are connections cut while a member stopped; they are not authentication failures.",
		}},
		{Name: "signer-key-divergence", Summary: "one member's external signer serves another key set than the others'", Environment: SignerLab{}, Members: 3, Run: signerKeyDivergence, Notes: []string{
			"Each member asks only its own signer (FetchKeys) which keys it verifies with: the member whose signer serves another set rejects the others' tokens, and they reject the tokens it mints, each with \"invalid signature, no keys found\" after a FetchKeys for the unknown kid that still lacks it (logged as \"Key id ... not found after refresh\").",
			"Fix: make every member's signer serve the same keys; a member fetches again at once when it meets an unknown kid, so no restart is needed.",
		}},
		{Name: "signer-stale", Summary: "one member's external signer fails FetchKeys: it keeps the stale key set, then rejects the key the signers rotate to", Environment: SignerLab{}, Members: 3, Run: signerStale, Notes: []string{
			"A member whose FetchKeys fails keeps verifying with the set it fetched last and retries every 10 s; no /readyz check fails. Nothing breaks until a signer signs with a key outside that set: then the member rejects those tokens, its own fresh ones included, with \"invalid signature, no keys found\".",
			"credwatch check names it from the member's /metrics (apiserver_externaljwt_fetch_keys_request_total with failures, an old apiserver_externaljwt_fetch_keys_success_timestamp) and its JWKS answer's Cache-Control max-age=0 (its refresh is overdue).",
		}, Offline: "the plan (a rotation keeping the old key) is sound; one member's signer failing FetchKeys at run time breaks it: check and watch name it from the member's /metrics (signer-keys-stale)"},
		{Name: "signer-down-at-restart", Summary: "one member's external signer stops; the member runs on, then restarts while the signer is down and never serves", Environment: SignerLab{}, Members: 3, Run: signerDownAtRestart, Notes: []string{
			"A running kube-apiserver whose signer stops keeps verifying with the keys it fetched last, but every TokenRequest it serves fails (its Sign call cannot reach the signer), and no /readyz check says so.",
			"At start kube-apiserver calls its signer's FetchKeys and Metadata while it builds its options (\"while setting up external-jwt-signer: ...\"); when they fail it exits before it listens, so a member restarted while its signer is down never serves: the kubelet restarts it in a loop until the signer is back.",
			"Fix: start the signer first (its unit or static pod before kube-apiserver's), then the member; credwatch check names the member unreachable and credwatch logs names the cause from its log.",
		}, Offline: "the members' flags do not change; the signer stops at run time: check names the member (member-unreachable), logs the cause (signer-unavailable)"},
		{Name: "authn-config-drift", Summary: "one member runs another AuthenticationConfiguration; an invalid edit of another member's file is silently not loaded", Environment: AuthnLab{}, Members: 3, Run: authnConfigDrift, Notes: []string{
			"kube-apiserver reloads its --authentication-config file on its own (a file watch, and a poll every minute); each member reads its own copy, so a change that reached one member makes its JWT authenticators accept other tokens than the others': the ID token one member accepts another refuses (\"oidc: verify token: oidc: expected audience ...\"), intermittently through a load balancer.",
			"An edit that does not validate (here a JWT issuer equal to the service-account issuer: \"URL must not overlap with disallowed issuers\") is logged once and dropped: the member keeps the configuration it ran, answers /readyz as before, and only apiserver_authentication_config_controller_automatic_reloads_total{status=\"failure\"} and its log say so.",
			"credwatch check names both from the members' /metrics: authn-config-differs (last_config_info hash) and authn-config-reload-failed (the last reload failed).",
		}},
		{Name: "jwt-issuer-jwks-unreachable", Summary: "the JWT issuer's JWKS fails while its discovery answers: the issuer rotates, and a member that joins has no keys at all", Environment: AuthnLab{}, Members: 2, Run: jwtIssuerJWKSUnreachable, Notes: []string{
			"A JWT authenticator fetches the discovery document to initialise and the JWKS only when it meets a kid it does not know: a JWKS that fails leaves every member healthy (/readyz passes) and verifying with the set it fetched last, until the issuer signs with a new key.",
			"A member that starts while the JWKS fails initialises from discovery and never holds a key: it refuses every ID token of the issuer, old keys included, while the other members accept the old ones (kubernetes#134689 asks for a /readyz check of it).",
			"credwatch check names each member from its /metrics: jwt-authenticator-no-keys (apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds{result=\"failure\"} newer than the last success), at error for the member that never fetched a key set.",
		}, Offline: "the configurations do not change; the issuer's JWKS fails at run time: check names the members from their /metrics (jwt-authenticator-no-keys)"},
		{Name: "node-audience-denied", Summary: "a node's kubelet requests a service-account token for its image credential provider's audience: refused for a pod whose spec names no volume for it, granted for one that does", Environment: CredentialProviderLab{}, Members: 2, Run: nodeAudienceDenied, Notes: []string{
			"A kubelet whose image credential provider asks for service-account tokens (KEP-4412, tokenAttributes.serviceAccountTokenAudience) requests one for the pod before the pull; NodeRestriction lets a node request a token only for an audience one of the pod's volumes names (or that RBAC grants with the request-serviceaccounts-token-audience verb), so a pod without such a volume gets no token and its pull runs without the provider's credentials.",
			"The kubelet logs \"Failed to provide credentials for image\" (k8s.io/kubernetes pkg/credentialprovider/plugin/plugin.go:416 at v1.36.3) with err=\"failed to get service account token: failed to fetch token: ...\" wrapping the apiserver's refusal (\"audience ... not found in pod spec volume\" up to 1.36; 1.37 rewords it, kubernetes#139046); the registry then refuses the anonymous pull. credwatch logs names the cause from either line.",
		}, Offline: "no control-plane plan is involved: the pod spec and the kubelet's CredentialProviderConfig decide; logs names the kubelet's refusal (node-audience-not-allowed)"},
		{Name: "capi-roll", Summary: "the real KubeadmControlPlane rolls a kubeadm control plane 1 -> 2 -> 1 (spec.rolloutAfter) behind a cloud-like balancer", Environment: ClusterAPI{}, Run: capiRoll, Notes: []string{
			"Cluster API v1.8.1 removes the old machine's etcd member before draining it (controlplane/kubeadm/internal/controllers/scale.go:138); v1.8.2 and later remove it in a pre-terminate hook after the drain.",
			"A kubeadm apiserver talks only to its local etcd: once that member is removed it serves TLS with no storage, and a tls or tcp check keeps it in the balancer until the machine is deregistered.",
		}},
		{Name: "capi-sa-secret-deleted", Summary: "the <cluster>-sa Secret is deleted, then KubeadmControlPlane rolls: a new key up to v1.12, a stopped roll from v1.13", Environment: ClusterAPI{}, Run: capiSASecretDeleted, Notes: []string{
			"KubeadmControlPlane generates the service-account key pair once, keeps it in the <cluster>-sa Secret and copies it to every machine it joins. Up to Cluster API v1.12 a deleted Secret is generated again, with a new pair, on its next reconcile; from v1.13 (#13175) it is not, once the control plane is initialized: KubeadmControlPlane sets CertificatesAvailable False and joins no new machine.",
			"With a new pair, while old and new machines serve together, tokens minted by one fail on the other; once the roll is over, every token minted before it fails until its pod gets a new one (the kubelet refreshes at 80 % of the lifetime). A stopped roll breaks no token: restore the Secret from a machine's /etc/kubernetes/pki/sa.key and sa.pub and the roll goes on.",
		}},
		{Name: "capi-issuer-placeholder", Summary: "the KubeadmControlPlane's issuer is a placeholder a postKubeadmCommands sed rewrites: each joined machine first serves with the wrong issuer", Environment: ClusterAPI{}, Run: capiIssuerPlaceholder, Notes: []string{
			"kubeadm join renders the apiserver's flags from the kubeadm-config ConfigMap, which KubeadmControlPlane keeps in step with its ClusterConfiguration: the placeholder is in the manifest kubeadm writes, and the kubelet starts the apiserver with it before postKubeadmCommands run.",
			"Until the kubelet restarts the apiserver from the rewritten manifest, the tokens it mints carry the placeholder issuer, which the other members do not accept, and it accepts only tokens with the placeholder.",
		}},
		{Name: CAPISelfManagedRoll, Summary: "a workload cluster with platform controllers is rolled from the management lab, moved into itself (clusterctl move) and rolled by its own managers", Environment: ClusterAPI{}, Run: capiSelfManagedRoll, Notes: []string{
			"The first field report could not reproduce its failures on workload clusters, only on management clusters: here the same cluster is rolled both ways, with the same platform controllers (Leases, informers, writes) on its control plane and its worker.",
			"Managed from itself, Cluster API's managers and the platform run in the cluster being rolled and call it through its own balancer; their leases, drains and tokens depend on the members the roll removes.",
		}},
		{Name: "cloud-password-rotated", Summary: "the vSphere account's password is rotated under a kubespray cluster (in-tree provider): new nodes never register", Environment: CloudEra{Era: "in-tree", Version: lab.InTreeCloudVersion}},
		{Name: "cloud-password-rotated-external", Summary: "the same with the vSphere CPI as a DaemonSet: a node that joins stays tainted, its Pods Pending", Environment: CloudEra{Era: "external"}},
		{Name: "cloud-password-rotated-openstack", Summary: "the OpenStack account's password is reset in a real Keystone under the OpenStack cloud controller manager: its token is revoked, a new node stays uninitialized", Environment: CloudEra{Era: "external-openstack"}},
	}
}

// Get returns the scenario with that name.
func Get(name string) (Scenario, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Names lists the registered scenario names.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name)
	}
	return out
}

// RunOptions configures Run: a fresh lab for one scenario.
type RunOptions struct {
	Dir     string        // lab state directory (required)
	BinDir  string        // lab binaries (default: lab.DefaultBinDir)
	Version string        // lab line (default: the environment's, else lab.DefaultVersion)
	Members int           // default: the scenario's minimum, at least 2
	Window  time.Duration // default DefaultWindow
	Log     io.Writer     // progress (nil: discard)
	// CAPI chooses the release and balancer of a Cluster API scenario.
	CAPI CAPIOptions
	// CloudLab is the credwatch-cloudlab program for the cloud scenarios (default: beside this
	// executable, else on PATH).
	CloudLab string
}

// Run brings up s's environment, runs s in it and tears the environment down (also on failure).
func Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error) {
	if s.Environment == nil {
		return nil, fmt.Errorf("scenario %s: no environment", s.Name)
	}
	return s.Environment.Run(ctx, s, o)
}

// List is the registry as a printable document.
type List struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Items      []Entry `json:"items"`
}

// Entry is one scenario in List.
type Entry struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Environment describes what the scenario runs in (Environment.String).
	Environment string `json:"environment"`
	// Version is the line the scenario always starts on (Environment.StartsOn).
	Version string `json:"version,omitempty"`
}

// NewList returns the registry as a List.
func NewList() List {
	l := List{APIVersion: report.APIVersion, Kind: "ScenarioList"}
	for _, s := range All() {
		l.Items = append(l.Items, Entry{Name: s.Name, Summary: s.Summary, Environment: s.Environment.String(), Version: s.Environment.StartsOn()})
	}
	return l
}

// WriteTable prints the registry.
func (l List) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	report.Row(tw, "NAME", "ENVIRONMENT", "WHAT HAPPENS")
	for _, e := range l.Items {
		report.Row(tw, e.Name, e.Environment, e.Summary)
	}
	return tw.Flush()
}
