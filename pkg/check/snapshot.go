// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"time"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/kubelet"
	"github.com/credwatch/credwatch/pkg/liveness"
)

// Source names: the inputs a check needs. A source that could not be fetched carries an error in
// Snapshot.Sources and every check needing it is skipped with that reason.
const (
	SrcMembers         = "members"
	SrcEndpointSlices  = "endpointslices"
	SrcStaticPods      = "static-pods"
	SrcMatrix          = "trust-matrix"
	SrcPods            = "pods"
	SrcServiceAccounts = "serviceaccounts"
	SrcSecrets         = "secrets"
	SrcLeases          = "leases"
	SrcNodes           = "nodes"
	SrcMetrics         = "metrics"
	SrcPublicIssuer    = "public-issuer"
	// SrcClusterAPI is the checked cluster's Cluster API view on the management cluster
	// (Config.ClusterAPI), read by the caller: watch says here why an interval could not read it.
	SrcClusterAPI = "cluster-api"
	// SrcPodLogs is the kube-apiserver static pods' logs, read through the API by the caller
	// (watch --pod-logs): watch says here why an interval could not read them.
	SrcPodLogs = "pod-logs"
	// SrcCloud: see cloud.go.
)

// Snapshot is everything one run fetched. Checks read it and never do I/O.
type Snapshot struct {
	Now     time.Time
	Server  string // the cluster endpoint of the kubeconfig
	Members []Member
	// ClusterAPI is Config.ClusterAPI with each Machine's member found (nil without --capi-cluster).
	ClusterAPI *ClusterAPI
	// Matrix is nil when the trust matrix could not be computed (see Sources[SrcMatrix]).
	Matrix *Matrix
	// Tokens are the user's tokens (--token-file), each reviewed by every member.
	Tokens []TokenProbe
	// Minted maps a member's name to the probe token minted through it for the matrix. It is
	// never printed nor written out; watch keeps some and hands them back as tokens to review.
	Minted map[string]string `json:"-"`
	// Public is nil when no member signs with an https issuer outside the cluster.
	Public *PublicIssuer
	// Routing is where the kubeconfig's server sent new connections, probed only when a member
	// that answers is not ready (nil otherwise).
	Routing *Routing

	Pods            []Pod
	ServiceAccounts int
	LegacySecrets   []LegacySecret
	Leases          []Lease
	Nodes           []Node
	// KubeletStarts are the kubelets' Starting Events (see SrcNodeEvents).
	KubeletStarts []kubelet.Start
	// Cloud is what pkg/cloud observed of the cloud-provider credentials (nil: see Sources[SrcCloud]).
	Cloud *cloud.Observation

	// Sources maps a source name to the reason it is unavailable ("" or absent: fetched).
	Sources map[string]string
	// Reads maps an inventory source (pods, nodes, serviceaccounts, secrets) to how it was read
	// (HowCache, HowLargePages, HowPaged, HowCount).
	Reads map[string]string `json:"-"`
}

// Missing returns the reason source is unavailable, or "".
func (s *Snapshot) Missing(source string) string {
	if s.Sources == nil {
		return ""
	}
	return s.Sources[source]
}

// Endpoint is which kube-apiserver a member is and how it was found. It begins Member and
// watch's MemberState alike, so that both say it in the same words (and the same JSON keys).
type Endpoint struct {
	Name    string   `json:"name"`
	URL     string   `json:"url"`
	FoundBy []string `json:"foundBy"` // endpointslice, static-pod, flag
	// StaticPod is kube-system/<name> when the member runs as a static pod.
	StaticPod string `json:"staticPod,omitempty"`
}

// Member is one kube-apiserver, as seen directly (not through the load balancer).
type Member struct {
	Endpoint
	// Machine is the Cluster API Machine it runs on, when the caller gave ClusterAPI.
	Machine string `json:"machine,omitempty"`
	// Flags are the kube-apiserver flags from the static pod's command line (credential-related ones).
	Flags map[string][]string `json:"flags,omitempty"`

	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"` // why it is unreachable
	Version   string `json:"version,omitempty"`
	ServedBy  string `json:"servedBy,omitempty"` // serving certificate CommonName
	// ServingCert is the SHA-256 of the serving certificate: it tells which member a connection
	// through the kubeconfig's server reached (see Routing).
	ServingCert string `json:"-"`
	// rejectsUs: the member answered 401 to credwatch's own credentials (see present).
	rejectsUs bool

	Discovery    *Discovery `json:"discovery,omitempty"`
	DiscoveryErr string     `json:"discoveryError,omitempty"`
	JWKS         []JWK      `json:"jwks,omitempty"`
	JWKSErr      string     `json:"jwksError,omitempty"`
	// JWKSMaxAge is the max-age of the JWKS answer's Cache-Control (nil: none): how long the
	// member's keys stay current. With an external signer it is the time left to the next key
	// refresh, 0 once that refresh is overdue (k8s.io/kubernetes
	// pkg/serviceaccount/externaljwt/plugin/keycache.go at v1.36.3, lines 95-101, served by
	// pkg/routes/openidmetadata.go, line 39).
	JWKSMaxAge *int `json:"jwksMaxAge,omitempty"`

	// From the probe token minted through this member (TokenRequest with no audiences).
	SigningKID   string   `json:"signingKid,omitempty"`
	SigningIss   string   `json:"signingIssuer,omitempty"`
	APIAudiences []string `json:"apiAudiences,omitempty"`
	MintErr      string   `json:"mintError,omitempty"`

	// Configuration from static-pod flags, where visible.
	Issuers            []string `json:"issuers,omitempty"`
	MaxTokenExpiration string   `json:"maxTokenExpiration,omitempty"`
	ExtendExpiration   string   `json:"extendTokenExpiration,omitempty"`
	JWKSURIFlag        string   `json:"jwksUriFlag,omitempty"`

	// NotReady are the readiness checks its /readyz?verbose reports failing (e.g. "etcd").
	NotReady  []string `json:"notReady,omitempty"`
	ReadyzErr string   `json:"readyzError,omitempty"`

	Metrics    *Metrics `json:"metrics,omitempty"`
	MetricsErr string   `json:"metricsError,omitempty"`
}

// Discovery is a member's /.well-known/openid-configuration.
type Discovery struct {
	Issuer  string   `json:"issuer"`
	JWKSURI string   `json:"jwks_uri"`
	Algs    []string `json:"id_token_signing_alg_values_supported,omitempty"`
}

// JWK is one published key, without its key material.
type JWK struct {
	KID string `json:"kid"`
	Alg string `json:"alg,omitempty"`
	Kty string `json:"kty,omitempty"`
}

// Metrics are a member's authentication figures from /metrics.
type Metrics struct {
	StaleTokens   float64            `json:"staleTokensTotal"`
	LegacyTokens  float64            `json:"legacyTokensTotal"`
	ValidTokens   float64            `json:"validTokensTotal"`
	AuthAttempts  map[string]float64 `json:"authenticationAttempts,omitempty"` // result -> count
	InvalidLegacy float64            `json:"invalidLegacyAutoTokenUsesTotal"`
	// Signer is the member's external JWT signer (--service-account-signing-endpoint), nil when
	// its /metrics show none.
	Signer *SignerMetrics `json:"externalSigner,omitempty"`
	// Authn is the member's structured authentication configuration (--authentication-config)
	// and its JWT authenticators, nil when its /metrics show neither.
	Authn *AuthnMetrics `json:"authenticationConfig,omitempty"`
}

// AuthnMetrics are what a member's /metrics say of its AuthenticationConfiguration (the
// apiserver_authentication_config_controller_* families) and of its JWT authenticators' JWKS
// (apiserver_authentication_jwt_authenticator_jwks_fetch_*). Every hash is kube-apiserver's
// "sha256:<hex>" of the value.
type AuthnMetrics struct {
	// APIServerIDHash is the hash of the member's apiserver identity (the label every family
	// carries).
	APIServerIDHash string `json:"apiserverIDHash,omitempty"`
	// ConfigHash is the hash of the configuration the member runs (the file's content when it
	// last loaded); "" when it runs none.
	ConfigHash string `json:"configHash,omitempty"`
	// Reloads counts automatic reloads by status ("success", "failure"); LastReload is when the
	// last of each status happened (Unix seconds).
	Reloads    map[string]float64 `json:"reloads,omitempty"`
	LastReload map[string]float64 `json:"lastReload,omitempty"`
	// Issuers are the JWT authenticators' JWKS fetches by issuer hash.
	Issuers map[string]JWKSFetch `json:"jwtIssuers,omitempty"`
}

// JWKSFetch is one JWT authenticator's JWKS state on one member.
type JWKSFetch struct {
	// KeySetHash is the hash of the last JWKS it fetched ("" when none succeeded).
	KeySetHash string `json:"keySetHash,omitempty"`
	// LastSuccess and LastFailure are when its last fetch of each result happened (Unix seconds;
	// 0: never).
	LastSuccess float64 `json:"lastSuccess,omitempty"`
	LastFailure float64 `json:"lastFailure,omitempty"`
}

// SignerMetrics are what a member's /metrics say of its external JWT signer (the
// apiserver_externaljwt_* families).
type SignerMetrics struct {
	// FetchKeysSuccess is when its last FetchKeys succeeded, DataTimestamp the data_timestamp that
	// answer carried (Unix seconds; 0: not exported).
	FetchKeysSuccess float64 `json:"fetchKeysSuccessTimestamp,omitempty"`
	DataTimestamp    float64 `json:"fetchKeysDataTimestamp,omitempty"`
	// FetchKeys and Sign count its calls by gRPC code ("OK", "Unavailable", ...).
	FetchKeys map[string]float64 `json:"fetchKeysRequests,omitempty"`
	Sign      map[string]float64 `json:"signRequests,omitempty"`
}

// FetchKeysFailed is how many of its FetchKeys calls failed (any code but OK).
func (s *SignerMetrics) FetchKeysFailed() float64 {
	var n float64
	for code, v := range s.FetchKeys {
		if code != "OK" {
			n += v
		}
	}
	return n
}

// Matrix is the trust matrix: the probe token minted through each member (rows), reviewed by
// each member (columns).
type Matrix struct {
	ServiceAccount string   `json:"serviceAccount"`
	Members        []string `json:"members"`
	Rows           []Row    `json:"rows"`
}

// Row is one token reviewed by every member.
type Row struct {
	Token   string `json:"token"` // "minted through apiserver-1" or a --token-file path
	Via     string `json:"via,omitempty"`
	Summary string `json:"summary,omitempty"` // iss, kid, aud; never the token
	Issuer  string `json:"issuer,omitempty"`
	KID     string `json:"kid,omitempty"`
	// Audiences the token carries (presented as the TokenReview's audiences).
	Audiences []string `json:"audiences,omitempty"`
	Error     string   `json:"error,omitempty"` // minting failed
	Cells     []Cell   `json:"cells"`
}

// Cell is one TokenReview answer.
type Cell struct {
	Member   string `json:"member"`
	Accepted bool   `json:"accepted"`
	// Cause is a catalogue cause ID when rejected, "unreachable" when the review failed.
	Cause   string `json:"cause,omitempty"`
	Message string `json:"message,omitempty"`
	User    string `json:"user,omitempty"`
}

// TokenProbe is one --token-file token reviewed by every member.
type TokenProbe = Row

// PublicIssuer is the issuer's own discovery document and JWKS, fetched from the issuer URL.
type PublicIssuer struct {
	Issuer       string     `json:"issuer"` // the iss members sign with
	DiscoveryURL string     `json:"discoveryUrl"`
	Discovery    *Discovery `json:"discovery,omitempty"`
	JWKSURL      string     `json:"jwksUrl,omitempty"`
	JWKS         []JWK      `json:"jwks,omitempty"`
	Error        string     `json:"error,omitempty"`
}

// Pod is what the checks need of a pod.
type Pod struct {
	Namespace, Name, ServiceAccount, Node, Phase string
	// Projected service-account token sources.
	Projected []ProjectedToken
	// Secrets mounted as volumes (names).
	SecretVolumes []string
	// UnschedulableMsg is the PodScheduled=False message when the reason is Unschedulable.
	UnschedulableMsg string
	// ToleratesUninit says its tolerations let it onto a node the cloud has not initialized.
	ToleratesUninit bool
}

// ProjectedToken is one serviceAccountToken projection.
type ProjectedToken struct {
	Audience          string `json:"audience,omitempty"`
	ExpirationSeconds int64  `json:"expirationSeconds"`
}

// LegacySecret is a kubernetes.io/service-account-token Secret (metadata only).
type LegacySecret struct {
	Namespace, Name, ServiceAccount string
	LastUsed                        string // kubernetes.io/legacy-token-last-used
	InvalidSince                    string // kubernetes.io/legacy-token-invalid-since
	Created                         time.Time
}

// Lease is a control-plane leader-election lease, judged at fetch time (pkg/liveness).
type Lease = liveness.Status

// Node is what the checks need of a node.
type Node struct {
	Name          string
	Uninitialized bool
	Created       time.Time
	// Ready is its Ready condition; Heartbeat is when its kubelet last posted it.
	Ready     bool
	Heartbeat time.Time
}
