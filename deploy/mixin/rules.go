// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin

import (
	"fmt"
	"strings"
	"time"
)

// The kube-apiserver series the mixin reads. Names, labels and help texts are those of the
// sources named; TestIntegrationSeriesExist checks them against the lab's v1.30.14 and v1.36.3
// members.
var (
	AuthenticationAttempts = Series{Name: "authentication_attempts", Labels: []string{"result"}, Since: "v1.30",
		Values: map[string][]string{"result": {"success", "failure", "error"}},
		Help:   "Counter of authenticated attempts.", Source: "staging/src/k8s.io/apiserver/pkg/endpoints/filters/metrics.go"}
	TokenCacheFetch = Series{Name: "authentication_token_cache_fetch_total", Labels: []string{"status"}, Since: "v1.30",
		Values: map[string][]string{"status": {"ok", "error"}},
		Source: "staging/src/k8s.io/apiserver/pkg/authentication/token/cache/stats.go"}
	StaleTokens = Series{Name: "serviceaccount_stale_tokens_total", Since: "v1.30",
		Help: "Cumulative stale projected service account tokens used", Source: "pkg/serviceaccount/metrics.go"}
	LegacyTokens = Series{Name: "serviceaccount_legacy_tokens_total", Since: "v1.30",
		Help: "Cumulative legacy service account tokens used", Source: "pkg/serviceaccount/metrics.go"}
	SignerKeysSuccess = Series{Name: "apiserver_externaljwt_fetch_keys_success_timestamp", Since: "v1.32",
		Help: "Unix Timestamp in seconds of the last successful FetchKeys request", Source: "pkg/serviceaccount/externaljwt/metrics/metrics.go"}
	SignerFetchKeys = Series{Name: "apiserver_externaljwt_fetch_keys_request_total", Labels: []string{"code"}, Since: "v1.32",
		Help: "Total attempts at syncing supported JWKs", Source: "pkg/serviceaccount/externaljwt/metrics/metrics.go"}
	SignerSign = Series{Name: "apiserver_externaljwt_sign_request_total", Labels: []string{"code"}, Since: "v1.32",
		Help: "Total attempts at signing JWT", Source: "pkg/serviceaccount/externaljwt/metrics/metrics.go"}
	AuthnConfigReloads = Series{Name: "apiserver_authentication_config_controller_automatic_reloads_total",
		Labels: []string{"status", "apiserver_id_hash"}, Since: "v1.30", Values: map[string][]string{"status": {"success", "failure"}},
		Help:   "Total number of automatic reloads of authentication configuration split by status and apiserver identity.",
		Source: "staging/src/k8s.io/apiserver/pkg/server/options/authenticationconfig/metrics/metrics.go"}
	AuthnConfigReloadTime = Series{Name: "apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds",
		Labels: []string{"status", "apiserver_id_hash"}, Since: "v1.30", Values: map[string][]string{"status": {"success", "failure"}},
		Help:   "Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.",
		Source: "staging/src/k8s.io/apiserver/pkg/server/options/authenticationconfig/metrics/metrics.go"}
	AuthnConfigInfo = Series{Name: "apiserver_authentication_config_controller_last_config_info",
		Labels: []string{"apiserver_id_hash", "hash"}, Since: "v1.34",
		Help:   "Information about the last applied authentication configuration with hash as label, split by apiserver identity.",
		Source: "staging/src/k8s.io/apiserver/pkg/server/options/authenticationconfig/metrics/metrics.go"}
	JWKSKeySetInfo = Series{Name: "apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info",
		Labels: []string{"jwt_issuer_hash", "apiserver_id_hash", "hash"}, Since: "v1.35",
		Help:   "Information about the last JWKS fetched by the JWT authenticator with hash as label, split by api server identity and jwt issuer.",
		Source: "staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/oidc/metrics.go"}
	JWKSFetchTimestamp = Series{Name: "apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds",
		Labels: []string{"result", "jwt_issuer_hash", "apiserver_id_hash"}, Since: "v1.35", Values: map[string][]string{"result": {"success", "failure"}},
		Help:   "Timestamp of the last successful or failed JWKS fetch split by result, api server identity and jwt issuer for the JWT authenticator.",
		Source: "staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/oidc/metrics.go"}
	ClientCertExpiration = Series{Name: "apiserver_client_certificate_expiration_seconds_bucket", Labels: []string{"le"}, Since: "v1.30",
		Help:   "Distribution of the remaining lifetime on the certificate used to authenticate a request.",
		Source: "staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go"}
)

// AllSeries lists every series the mixin reads.
func AllSeries() []Series {
	return []Series{AuthenticationAttempts, TokenCacheFetch, StaleTokens, LegacyTokens, SignerKeysSuccess, SignerFetchKeys,
		SignerSign, AuthnConfigReloads, AuthnConfigReloadTime, AuthnConfigInfo, JWKSKeySetInfo, JWKSFetchTimestamp, ClientCertExpiration}
}

// Recorded series.
const (
	RecAttemptRate        = "instance:authentication_attempts:rate5m"
	RecFailureRate        = "instance:authentication_attempts_failures:rate5m"
	RecFailureRatio       = "instance:authentication_attempts_failures:ratio_rate5m"
	RecOthersFailureRatio = "instance:authentication_attempts_failures_others:ratio_rate5m"
	RecTokenCacheErrors   = "instance:authentication_token_cache_fetch_errors:ratio_rate5m"
	RecSignerFetchErrors  = "instance:apiserver_externaljwt_fetch_keys_errors:ratio_rate5m"
	RecSignerSignErrors   = "instance:apiserver_externaljwt_sign_errors:ratio_rate5m"
)

// Groups are the mixin's rule groups: the recording rules first, then the alerts.
func Groups(c Config) ([]Group, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	sel, by := c.APIServerSelector, fmt.Sprintf("%s, instance", c.ClusterLabel)
	withSel := func(name, extra string) string {
		if extra == "" {
			return fmt.Sprintf("%s{%s}", name, sel)
		}
		return fmt.Sprintf("%s{%s,%s}", name, sel, extra)
	}
	// others: the same ratio over every other member of the cluster (cluster total minus the member).
	others := func(rec string) string {
		return fmt.Sprintf("sum by (%s) (%s) - on (%s) group_right %s", c.ClusterLabel, rec, c.ClusterLabel, rec)
	}
	errorRatio := func(s Series, bad string) string {
		return fmt.Sprintf("sum by (%s) (rate(%s[5m]))\n/\nsum by (%s) (rate(%s[5m]))", by, withSel(s.Name, bad), by, withSel(s.Name, ""))
	}
	rb := func(anchor string) string { return anchor }
	pct := func(f float64) string { return fmt.Sprintf("%g%%", f*100) }

	recording := Group{Name: "credwatch-credentials.rules", Rules: []Rule{
		{Record: RecAttemptRate, Uses: []Series{AuthenticationAttempts},
			Expr: fmt.Sprintf("sum by (%s) (rate(%s[5m]))", by, withSel(AuthenticationAttempts.Name, ""))},
		// A member that never failed one attempt has no result="error" or "failure" series: "or"
		// gives it a failure rate of 0, so that the others' ratio counts its attempts.
		{Record: RecFailureRate, Uses: []Series{AuthenticationAttempts},
			Expr: fmt.Sprintf("sum by (%s) (rate(%s[5m]))\nor\n0 * %s", by, withSel(AuthenticationAttempts.Name, `result!="success"`), RecAttemptRate)},
		{Record: RecFailureRatio, Uses: []Series{AuthenticationAttempts},
			Expr: fmt.Sprintf("%s\n/\n%s", RecFailureRate, RecAttemptRate)},
		{Record: RecOthersFailureRatio, Uses: []Series{AuthenticationAttempts},
			Expr: fmt.Sprintf("(%s)\n/\n(%s)", others(RecFailureRate), others(RecAttemptRate))},
		{Record: RecTokenCacheErrors, Uses: []Series{TokenCacheFetch}, Expr: errorRatio(TokenCacheFetch, `status="error"`)},
		{Record: RecSignerFetchErrors, Uses: []Series{SignerFetchKeys}, Expr: errorRatio(SignerFetchKeys, `code!="OK"`)},
		{Record: RecSignerSignErrors, Uses: []Series{SignerSign}, Expr: errorRatio(SignerSign, `code!="OK"`)},
	}}

	member := "{{ $labels.instance }}"
	alerts := Group{Name: "credwatch-credentials", Rules: []Rule{
		{Alert: "CredwatchAPIServerAuthFailures", Severity: "warning", For: 10 * time.Minute, Runbook: rb("credwatchapiserverauthfailures"),
			Uses:    []Series{AuthenticationAttempts},
			Expr:    fmt.Sprintf("%s > %g\nand on (%s)\n%s > %g", RecFailureRatio, c.FailureRatio, by, RecAttemptRate, c.MinAttemptRate),
			Summary: "API server " + member + " rejects over " + pct(c.FailureRatio) + " of the credentials it is sent",
			Description: "Over " + pct(c.FailureRatio) + " of the authentication attempts on API server member " + member +
				" failed for 10 minutes (authentication_attempts{result!=\"success\"}). 401s never reach apiserver_request_total, " +
				"so no error-budget alert sees them. Run `kubectl credwatch check` for which tokens fail and why."},
		{Alert: "CredwatchAPIServerRejectsWhatOthersAccept", Severity: "critical", For: 5 * time.Minute, Runbook: rb("credwatchapiserverrejectswhatothersaccept"),
			Uses: []Series{AuthenticationAttempts},
			Expr: fmt.Sprintf("%s - on (%s) %s > %g\nand on (%s)\n%s > %g", RecFailureRatio, by, RecOthersFailureRatio, c.RollGap,
				by, RecAttemptRate, c.MinAttemptRate),
			Summary: "API server " + member + " rejects credentials the other members accept",
			Description: "The share of failed authentication attempts on member " + member + " is over " + pct(c.RollGap) +
				" above that of the other members of the cluster together: clients see 401s whenever the load balancer sends " +
				"them to " + member + ". This is the signature of a roll whose new member has another service-account key " +
				"or issuer (or an old one that lost them). Run `kubectl credwatch check` for the cause."},
		{Alert: "CredwatchAPIServerTokenCacheErrors", Severity: "warning", For: 10 * time.Minute, Runbook: rb("credwatchapiservertokencacheerrors"),
			Uses:    []Series{TokenCacheFetch},
			Expr:    RecTokenCacheErrors + " > 0",
			Summary: "API server " + member + " gets errors from its token authenticators",
			Description: "For 10 minutes, tokens that API server " + member + " had to authenticate (not in its token cache) " +
				"have ended in an authenticator error (authentication_token_cache_fetch_total{status=\"error\"}): a token with " +
				"an invalid signature or a key the member does not have, or a token webhook that fails. Errors are not " +
				"cached, so every retry counts again. With CredwatchAPIServerRejectsWhatOthersAccept it is key drift."},
		{Alert: "CredwatchAPIServerStaleTokens", Severity: "warning", For: 15 * time.Minute, Runbook: rb("credwatchapiserverstaletokens"),
			Uses:    []Series{StaleTokens},
			Expr:    fmt.Sprintf("sum by (%s) (rate(%s[10m])) > 0", by, withSel(StaleTokens.Name, "")),
			Summary: "API server " + member + " accepts stale service-account tokens",
			Description: "Clients present projected service-account tokens past their refresh time to API server " + member +
				" ({{ $value | humanize }}/s for 15 minutes; serviceaccount_stale_tokens_total). Those clients read their token once " +
				"and will fail when it expires; the audit annotation authentication.k8s.io/stale-token names them."},
		{Alert: "CredwatchAPIServerLegacyTokensInUse", Severity: "info", Runbook: rb("credwatchapiserverlegacytokensinuse"),
			Uses:    []Series{LegacyTokens},
			Expr:    fmt.Sprintf("sum by (%s) (increase(%s[1h])) > 0", by, withSel(LegacyTokens.Name, "")),
			Summary: "API server " + member + " authenticates legacy Secret-based service-account tokens",
			Description: "API server " + member + " authenticated {{ $value | humanize }} legacy (Secret-based, non-expiring) " +
				"service-account tokens in the last hour (serviceaccount_legacy_tokens_total). They survive every key rotation but " +
				"the last and are cleaned up by the legacy token cleaner."},
		{Alert: "CredwatchExternalSignerKeysStale", Severity: "warning", For: 5 * time.Minute, Runbook: rb("credwatchexternalsignerkeysstale"),
			Uses:    []Series{SignerKeysSuccess},
			Expr:    fmt.Sprintf("time() - %s > %d", withSel(SignerKeysSuccess.Name, ""), int(c.SignerKeysStale.Seconds())),
			Summary: "API server " + member + " has not fetched its external signer's keys for {{ $value | humanizeDuration }}",
			Description: "API server " + member + " last fetched the public keys of its external JWT signer " +
				"{{ $value | humanizeDuration }} ago (apiserver_externaljwt_fetch_keys_success_timestamp). It verifies with the " +
				"keys it last had: tokens signed with a newer key are rejected there, and /readyz says nothing."},
		{Alert: "CredwatchExternalSignerFetchErrors", Severity: "warning", For: 10 * time.Minute, Runbook: rb("credwatchexternalsignerfetcherrors"),
			Uses:    []Series{SignerFetchKeys},
			Expr:    RecSignerFetchErrors + " > 0",
			Summary: "API server " + member + " fails to fetch keys from its external signer",
			Description: "{{ $value | humanizePercentage }} of API server " + member + "'s key fetches from its external JWT " +
				"signer failed for 10 minutes (apiserver_externaljwt_fetch_keys_request_total{code!=\"OK\"})."},
		{Alert: "CredwatchExternalSignerSignErrors", Severity: "critical", For: 5 * time.Minute, Runbook: rb("credwatchexternalsignersignerrors"),
			Uses:    []Series{SignerSign},
			Expr:    RecSignerSignErrors + " > 0",
			Summary: "API server " + member + " cannot sign tokens through its external signer",
			Description: "{{ $value | humanizePercentage }} of the TokenRequests API server " + member + " sent to its external " +
				"JWT signer failed for 5 minutes (apiserver_externaljwt_sign_request_total{code!=\"OK\"}): pods that ask this " +
				"member for a token get none."},
		// The last reload failed: a failure newer than the last success, or a failure and no success
		// yet (the load at start-up is no automatic reload). increase() of the failures counter would
		// miss the first failure: a counter born at 1 has no increase.
		{Alert: "CredwatchAuthenticationConfigReloadFailed", Severity: "warning", Runbook: rb("credwatchauthenticationconfigreloadfailed"),
			Uses: []Series{AuthnConfigReloadTime},
			Expr: fmt.Sprintf("%[1]s\n> ignoring (status)\n%[2]s\nor\n(%[1]s unless ignoring (status) %[2]s)",
				withSel(AuthnConfigReloadTime.Name, `status="failure"`), withSel(AuthnConfigReloadTime.Name, `status="success"`)),
			Summary: "API server " + member + " failed to reload its authentication configuration",
			Description: "The last automatic reload of API server " + member + "'s --authentication-config file failed " +
				"(apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds{status=\"failure\"} newer " +
				"than any success). It keeps the previous configuration, so it authenticates differently from a member " +
				"that loaded the new one."},
		{Alert: "CredwatchAuthenticationConfigDrift", Severity: "warning", For: 15 * time.Minute, Runbook: rb("credwatchauthenticationconfigdrift"),
			Uses: []Series{AuthnConfigInfo},
			Expr: fmt.Sprintf("%s\nand on (%s)\n(count by (%s) (count by (%s, hash) (%s)) > 1)",
				withSel(AuthnConfigInfo.Name, ""), c.ClusterLabel, c.ClusterLabel, c.ClusterLabel, withSel(AuthnConfigInfo.Name, "")),
			Summary: "API server " + member + " runs another authentication configuration than its peers",
			Description: "The members of the cluster have run more than one authentication configuration for 15 minutes " +
				"(apiserver_authentication_config_controller_last_config_info{hash} differs across apiserver_id_hash); member " +
				member + " runs {{ $labels.hash }}. A JWT issuer one member trusts is rejected by another."},
		{Alert: "CredwatchJWKSDrift", Severity: "warning", For: 15 * time.Minute, Runbook: rb("credwatchjwksdrift"),
			Uses: []Series{JWKSKeySetInfo},
			Expr: fmt.Sprintf("%s\nand on (%s, jwt_issuer_hash)\n(count by (%s, jwt_issuer_hash) (count by (%s, jwt_issuer_hash, hash) (%s)) > 1)",
				withSel(JWKSKeySetInfo.Name, ""), c.ClusterLabel, c.ClusterLabel, c.ClusterLabel, withSel(JWKSKeySetInfo.Name, "")),
			Summary: "API server " + member + " holds another key set of a JWT issuer than its peers",
			Description: "For 15 minutes the members have held different key sets of the JWT issuer {{ $labels.jwt_issuer_hash }} " +
				"(apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info{hash}); member " + member +
				" holds {{ $labels.hash }}. A token signed with a key only some members know is rejected by the others."},
		{Alert: "CredwatchJWTAuthenticatorFetchFailing", Severity: "warning", For: 10 * time.Minute, Runbook: rb("credwatchjwtauthenticatorfetchfailing"),
			Uses: []Series{JWKSFetchTimestamp},
			Expr: fmt.Sprintf("%[1]s\n> ignoring (result)\n%[2]s\nor\n(%[1]s unless ignoring (result) %[2]s)",
				withSel(JWKSFetchTimestamp.Name, `result="failure"`), withSel(JWKSFetchTimestamp.Name, `result="success"`)),
			Summary: "API server " + member + " fails to fetch a JWT issuer's keys",
			Description: "The last JWKS fetch of API server " + member + " for JWT issuer {{ $labels.jwt_issuer_hash }} failed, " +
				"and has for 10 minutes (apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds{result=\"failure\"} " +
				"newer than the last success). It verifies with the keys it last had, or with none."},
	}}
	for _, a := range []struct {
		name, severity string
		left           time.Duration
	}{{"CredwatchClientCertificateExpiring", "warning", c.CertWarning}, {"CredwatchClientCertificateExpiringSoon", "critical", c.CertCritical}} {
		bucket := withSel(ClientCertExpiration.Name, "")
		alerts.Rules = append(alerts.Rules, Rule{Alert: a.name, Severity: a.severity, Runbook: rb("credwatchclientcertificateexpiring"),
			Uses: []Series{ClientCertExpiration},
			Expr: fmt.Sprintf("histogram_quantile(0.01, sum by (%s, le) (rate(%s[5m]))) < %d\nand on (%s)\nsum by (%s) (rate(%s[5m])) > 0",
				by, bucket, int(a.left.Seconds()), by, by, strings.Replace(bucket, "_bucket{", "_count{", 1)),
			Summary: "Clients of API server " + member + " present certificates that expire within " + humanDays(a.left),
			Description: "A client presents API server " + member + " a client certificate that expires in less than " +
				humanDays(a.left) + " ({{ $value | humanizeDuration }} at the 1st percentile of " +
				"apiserver_client_certificate_expiration_seconds). When it expires that client gets 401s."})
	}
	return []Group{recording, alerts}, nil
}

func humanDays(d time.Duration) string {
	switch days := int(d.Hours() / 24); {
	case days == 1:
		return "1 day"
	case days > 1:
		return fmt.Sprintf("%d days", days)
	}
	return d.String()
}
