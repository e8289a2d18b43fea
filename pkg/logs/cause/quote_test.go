// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// TestQuotesOnly: a line at info or below, or one that says it succeeded, names no cause —
// unknown included — unless it is a record that is evidence at any severity; context events are
// not failures and are unaffected. The corpus of such lines from public threads is
// pkg/logs/testdata/negative (TestNegativeCorpus); these cases pin each form of the rule.
func TestQuotesOnly(t *testing.T) {
	cl := NewClassifier(catalogue.Default())
	const probe = "EnvironmentCredential authentication unavailable. Environment variables are not fully configured."
	tests := []struct {
		name  string
		l     Line
		cause string // "" = no cause
	}{
		// Severities the reader found.
		{"klog I quoting an aggregate", Line{Msg: "token review for kubelet", Err: "[invalid bearer token, service account token has expired]", Severity: "I"}, ""},
		{"JSON debug", Line{Msg: "Unable to load credentials from EnvironmentVariableCredentialsProvider: token has invalid claims: token is expired", Severity: "DEBUG"}, ""},
		{"JSON info, OIDC error", Line{Msg: "finished unary call with code Unauthenticated", Err: "rpc error: code = Unauthenticated desc = invalid session: oidc: token is expired", Severity: "info"}, ""},
		{"the same at warning", Line{Msg: "Failed to verify token", Err: "failed to verify token: oidc: token is expired", Severity: "warning"}, "token-expired"},
		// Severities the message's head names.
		{"Python logging", Line{Msg: "DEBUG:azure.identity._internal.decorators:EnvironmentCredential.get_token failed: " + probe}, ""},
		{".NET event source", Line{Msg: "Azure-Identity: [Informational] EnvironmentCredential.GetToken was unable to retrieve an access token. " + probe}, ""},
		{".NET event source, error", Line{Msg: "Azure-Identity: [Error] EnvironmentCredential.GetToken was unable to retrieve an access token. " + probe}, "cloud-credentials-missing"},
		{"JavaScript colon path", Line{Msg: "azure:identity:info EnvironmentCredential => getToken() => ERROR: EnvironmentCredential is unavailable. token is expired"}, ""},
		{"hclog", Line{Msg: "[INFO]  auth.handler: retrying after error: service account token has expired"}, ""},
		{"hclog error", Line{Msg: "[ERROR] auth.handler: error authenticating: oidc: token is expired"}, "token-expired"},
		{"logfmt", Line{Msg: `time="2023-07-31T08:41:37Z" level=info msg="finished unary call with code Unauthenticated" error="invalid session: oidc: token is expired"`}, ""},
		{"logfmt error", Line{Msg: `time="2023-07-31T08:41:37Z" level=error msg="invalid session: oidc: token is expired"`}, "token-expired"},
		{"Envoy bracket", Line{Msg: "[2025-11-07 04:23:48.934][74][debug][jwt] [authenticator.cc:163] jwt_auth: JWT authentication starts (allow_failed=false), tokens size=1"}, ""},
		{"Istio console", Line{Msg: "info\tsds\tretrying after Unauthenticated: token is expired"}, ""},
		{"log4j", Line{Msg: "23/04/08 05:11:03 DEBUG AwsCredentialsProviderChain: Unable to load credentials from WebIdentityTokenCredentialsProvider(): token is expired"}, ""},
		{"logrus short", Line{Msg: "INFO[0000] token is expired, renewing"}, ""},
		{"INFORMATION is not INFO", Line{Msg: "INFORMATION: oidc: token is expired"}, "token-expired"},
		{"a level word in the message is not a level", Line{Msg: "failed to load info: oidc: token is expired"}, "token-expired"},
		// Success.
		{"successfully", Line{Msg: "Successfully renewed the credential after oidc: token is expired", Severity: "W"}, ""},
		{"authentication successful", Line{Msg: "auth.handler: authentication successful after Unauthorized"}, ""},
		{"unsuccessful is a failure", Line{Msg: "login unsuccessful: oidc: token is expired"}, "token-expired"},
		{"an error is an error whatever it says", Line{Msg: "Successfully read the token file, but oidc: token is expired", Severity: "E"}, "token-expired"},
		// Records that are evidence at any severity.
		{"client-go request trace", Line{Msg: "GET https://192.168.99.100:8443/api?timeout=32s 401 Unauthorized in 0 milliseconds", Severity: "I"}, Client},
		{"Envoy's jwt_authn outcome", Line{Msg: "[2023-04-02 14:37:45.918][18][debug][jwt] [authenticator.cc:220] Jwt authentication completed with: Jwt is expired"}, "token-expired"}, // jwt_verify_lib's status (issue 43's meshes)
		{"Envoy's outcome OK", Line{Msg: "[2023-04-02 14:37:45.918][18][debug][jwt] [authenticator.cc:220] Jwt authentication completed with: OK; oidc: token is expired"}, ""},
		{"glog-era failure at info", Line{Msg: "Unable to register 10.0.0.4 with the apiserver: Post https://10.0.0.2:6443/api/v1/nodes: x509: certificate signed by unknown authority", Severity: "I"}, "tls-untrusted"},
		{"the failure opens the line only", Line{Msg: "node registration: Unable to register: x509: certificate signed by unknown authority", Severity: "I"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := cl.Classify(tt.l)
			got := ""
			if ok && m.Kind == "cause" {
				got = m.Cause
			}
			if got != tt.cause {
				t.Errorf("cause %q, want %q (%+v)", got, tt.cause, m)
			}
		})
	}
	// Context events are not failures: the rule leaves them alone.
	if m, ok := cl.Classify(Line{Msg: `Resetting endpoints for master service "kubernetes" to [10.0.1.1]`, Severity: "I"}); !ok || m.Kind != "event" {
		t.Errorf("an info event: got %v %+v", ok, m)
	}
}

// TestSeverityOf: the severity a message's head names, in the forms the consumers' loggers print.
func TestSeverityOf(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want sevClass
	}{
		{"[botocore.credentials] INFO: Found credentials in shared credentials file: ~/.aws/credentials", sevQuiet},
		{"2021-04-09 07:49:06,019 - MainThread - botocore.credentials - DEBUG - Skipping environment variable credential check", sevQuiet},
		{"[2024-09-18 19:19:37,276: INFO/ForkPoolWorker-3] Found credentials in environment variables.", sevQuiet},
		{"[     4.391229s]  INFO ThreadId(02) daemon:admin: linkerd2_app_core::serve: Connection closed", sevQuiet},
		{"INFO [PROC:1]    Joining the cluster with a secure token. pid:7.1 service/connect.go:585", sevQuiet},
		{"[2024-09-30T13:35:39.3506030Z T: 7f9d48be4b80] DEBUG : Identity: Creating DefaultAzureCredential", sevQuiet},
		{"debug   envoy jwt       addHeaderConfig for issuer http://host.docker.internal:8000 at authorization", sevQuiet},
		{"[ERROR] auth.handler: error authenticating", sevLoud},
		{"ERRO[0003] token expired", sevLoud},
		{"WARN ThreadId(01) identity: Failed to certify identity", sevWarn},
		{`time="2021-02-09T02:47:33Z" level=warning msg="token"`, sevWarn},
		{"error: You must be logged in to the server (Unauthorized)", sevLoud},
		{"Unable to authenticate the request", sevUnknown},
		{"the info endpoint answered 401", sevUnknown},
		{"AADSTS700024: Client assertion is not within its valid time range.", sevUnknown},
	} {
		if got := severityOf(tt.msg); got != tt.want {
			t.Errorf("severityOf(%q) = %d, want %d", tt.msg, got, tt.want)
		}
	}
}
