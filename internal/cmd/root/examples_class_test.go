// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package root

import "testing"

// class is how the tests treat an example.
type class int

const (
	runOffline class = iota + 1 // TestExamplesRun runs it, with the files it names and no cluster
	runOnLab                    // TestIntegrationExamplesRun runs it on a lab, in the table's order
	skipped                     // nobody runs it, for the reason given
)

// classified is an example command (ex.cmd, wherever it is written) and its class.
type classified struct {
	cmd   string
	class class
	why   string // skipped: the reason
	stdin string // the file another program's output stands for, when that output is piped to it
}

func offline(cmd string) classified { return classified{cmd: cmd, class: runOffline} }

// offlineFed is offline, reading the file stdin in place of the program piped to it.
func offlineFed(cmd, stdin string) classified {
	return classified{cmd: cmd, class: runOffline, stdin: stdin}
}

func onLab(cmd string) classified { return classified{cmd: cmd, class: runOnLab} }

func skip(cmd, why string) classified { return classified{cmd: cmd, class: skipped, why: why} }

// classes is the one table of every example of the help and the docs (TestExamplesClassified
// fails on one it lacks, and on a row no example has). The lab rows run in this order, as one
// session: the lab comes up; the examples that read it run; then those that change it, each on
// members it still has; `lab down`; and the other shapes of `lab up`.
func classes() []classified {
	const (
		capi = "needs a Cluster API management cluster: make test-capi runs the Cluster API lab " +
			"(TestIntegrationCAPIScenarios, TestIntegrationCLICAPISupervisorKilledMidRoll)"
		capiLong = "a Cluster API lab that moves into itself and rolls twice (8-15 minutes): make test-capi-long " +
			"runs the same scenario through the registry (TestIntegrationCAPISelfManagedRoll, pkg/lab/scenario)"
		ownLab = "starts a lab of its own with tenants for minutes; TestIntegrationScenarioNewLine and " +
			"TestIntegrationScenarioOldLine (pkg/lab/scenario) run key-drift through the same runner on both lines"
		signerLab = "a second lab, its members signing through external signers; TestIntegrationSignerLab " +
			"(pkg/lab/signer) starts the same lab through lab.Options.ExternalSigner, TestIntegrationCheckExternalSigners (pkg/check) checks it"
		oidcLab = "a second lab, its members reading an AuthenticationConfiguration that trusts the lab's OIDC issuer; " +
			"TestIntegrationAuthenticationConfig (pkg/lab/oidc) starts the same lab through lab.Options.OIDC, " +
			"TestIntegrationCheckAuthenticationConfig (pkg/check) checks it"
		credProvLab = "a second lab with a node whose kubelet runs the lab's image credential provider; " +
			"TestIntegrationScenarioNodeAudience (pkg/lab/scenario) starts the same lab through lab.Options.CredentialProvider"
		cloudLab = "a cloud: credwatch-cloudlab, real nodes and vcsim; TestIntegrationScenarioCommand " +
			"(pkg/lab/cloudlab) runs this command"
		nodes = "needs real lab nodes (kubelet, containerd, the tenant image); TestIntegrationLabNodes " +
			"(pkg/lab/podtenant) brings up that lab and deploys and tallies the same tenant pods"
	)
	return []classified{
		offline("check --print-rbac"),
		offline("cloud --no-cluster --no-login --config ./vsphere.conf --config ./openstack/"),
		offline("cloud --no-cluster --config cloud_config"),
		offline("explain member-key-drift"),
		offline("explain signing-key-unknown"),
		offline("keys id /etc/kubernetes/pki/sa.pub"),
		offline("keys jwks /etc/kubernetes/pki/sa.pub"),
		offline("lab scenario --list"),
		offlineFed("logs -", "stern.log"),
		offline("logs --fail-on none dump/kube-system/"),
		offline("logs --trace-credential JTI=6d7f8a90-0000-4000-8000-000000000001 cp-1/audit.log cp-2/audit.log cp-3/audit.log"),
		offline("logs --issued-credentials -o json cp-1/audit.log cp-2/audit.log cp-3/audit.log"),
		offline("logs --fail-on warning -o sarif dump/"),
		offline("logs --include 'kubelet*' --include 'kube-apiserver*' --exclude old bundle/"),
		offline("logs --year 2026 consumers.log"),
		offline("logs --year 2026 irsa.log"),
		offline("logs --year 2026 istiod.log"),
		offline("logs --year 2026 kube-controller-manager.log"),
		offline("logs --year 2026 pkg/logs/testdata/lab/v1.30.14/key-drift/apiserver-*.log"),
		offline("logs --year 2026 --fail-on none hack/runbook/testdata/lab/authn/apiserver-*.log"),
		offline("logs --year 2026 pkg/logs/testdata/lab/v1.36.3/audience-change/apiserver-*.log"),
		offline("logs --year 2026 pkg/logs/testdata/lab/v1.36.3/bound-object-deleted/apiserver-*.log"),
		offline("logs --year 2026 pkg/logs/testdata/lab/v1.36.3/clock-skew/apiserver-*.log"),
		offline("logs --year 2026 pkg/logs/testdata/lab/v1.36.3/issuer-change/apiserver-*.log"),
		offline("logs --year 2026 pkg/logs/testdata/lab/v1.36.3/key-drift/apiserver-*.log"),
		offline("logs --year 2026 pkg/logs/testdata/lab/v1.36.3/serviceaccount-recreated/apiserver-*.log"),
		offline("logs --year 2026 vault.log"),
		offline("logs --year 2026 secrets.log"),
		offline("logs -o json /var/log/pods/"),
		offline("logs -o sarif --fail-on warning /var/log/pods/"),
		offline("logs apiserver-*.log.gz kubelet-journal.txt"),
		offline("preflight --current ./live --planned ./rendered --capi-version v1.8.1"),
		offline("preflight --current current.yaml --planned planned.yaml --fail-on warning -o sarif"),
		offline("preflight --current pkg/preflight/testdata/static-signer-on/current.yaml --planned pkg/preflight/testdata/static-signer-on/planned.yaml --signer-max-token-expiration 5m"),
		offlineFed("token inspect - -o json", "token.jwt"),
		offline("token inspect /var/run/secrets/kubernetes.io/serviceaccount"),
		offline("token inspect hack/runbook/testdata/lab/tokens/original-member.jwt --at 2026-11-30T12:43:56Z"),
		offline("token mint --key drift.key --issuer https://kubernetes.default.svc --pod web-0:1b4e... --iat +2m --out t.jwt"),
		offline("token mint --key sa.key --issuer https://kubernetes.default.svc --pod web-0:1b4e... --lifetime 3607s --extended --out -"),
		offline("token verify hack/runbook/testdata/lab/tokens/drifted-member.jwt --key hack/runbook/testdata/lab/tokens/shared-sa.pub --issuer https://kubernetes.default.svc.cluster.local --at 2026-11-30T12:43:56Z"),
		offline("token verify hack/runbook/testdata/lab/tokens/original-member.jwt --key hack/runbook/testdata/lab/tokens/shared-sa.pub --issuer https://issuer.credwatch.example --at 2026-11-30T12:43:56Z"),
		offline("token verify hack/runbook/testdata/lab/tokens/original-member.jwt --key hack/runbook/testdata/lab/tokens/shared-sa.pub --issuer https://issuer.credwatch.example --issuer https://kubernetes.default.svc.cluster.local --at 2026-11-30T12:43:56Z"),
		offline("token verify hack/runbook/testdata/lab/tokens/original-member.jwt --key hack/runbook/testdata/lab/tokens/shared-sa.pub --issuer https://kubernetes.default.svc.cluster.local --at 2026-11-30T12:54:56Z"),
		offline("token verify token.jwt --key sa.pub --issuer https://kubernetes.default.svc.cluster.local --kube-version 1.30"),

		// The lab session, in order.
		onLab("lab up --members 3 --with-controller-manager"),
		onLab("lab status"),
		onLab("lab status -o json"),
		onLab("check"),
		onLab("check --create-probe-sa"),
		onLab("check --create-probe-sa --no-cloud"),
		onLab("check --all-contexts --create-probe-sa"),
		onLab("check --token-file ./token --fail-on warning -o sarif"),
		onLab("watch --create-probe-sa"),
		onLab("watch --create-probe-sa --interval 2s --live never"),
		onLab("watch --duration 10m --fail-on error -o json --report roll.html"),
		onLab("watch --duration 20m --fail-on error -o json --report roll.html"),
		onLab("watch --listen :9090 --events -o json"),
		onLab("logs --from-cluster --since 2h"),
		onLab("logs --from-cluster --since 2h --html roll.html"),
		onLab("cloud --no-login"),
		onLab("cloud --no-login -o sarif"),
		onLab("cloud --insecure-skip-tls-verify=vsphere -o json"),
		onLab("cloud --config /etc/kubernetes/cloud_config"),
		onLab("keys diff a/sa.pub https://10.0.0.2:6443/openid/v1/jwks --ca-file ca.crt --bearer-token-file token"),
		onLab("token verify token.jwt --jwks https://10.0.0.1:6443 --ca-file ca.crt --bearer-token-file token --issuer https://kubernetes.default.svc --at +10m"),
		onLab("lab tenants start --pods 4"),
		onLab("lab tenants"),
		onLab("lab partition apiserver-2 --from etcd"),
		onLab("lab heal apiserver-2"),
		onLab("lab remove-member apiserver-1 --etcd-first --keep-apiserver"),
		onLab("lab remove-member apiserver-1"),
		onLab("lab roll"),
		onLab("lab roll --version v1.36.3"),
		onLab("lab roll --version v1.36.3 --sa-key new"),
		onLab("lab add-member --sa-key new"),
		onLab("lab add-member --issuer https://new.example --issuer https://kubernetes.default.svc.cluster.local"),
		onLab("lab down"),
		onLab("lab up"),
		onLab("lab up --members 3"),
		onLab("lab up --version v1.30.14 --lb-mode all"),

		skip("check --context mgmt --capi-cluster w1 -n org-a --create-probe-sa", capi),
		skip("check --kubeconfig ~/.local/state/credwatch/lab/admin.kubeconfig --capi-cluster w1 -n default --create-probe-sa", capi),
		skip("watch --context mgmt --capi-cluster w1 -n org-a --create-probe-sa", capi),
		skip("lab capi status", capi),
		skip("lab capi status -o json", capi),
		skip("lab capi up --capi v1.14.2 --lb-check tcp", capi),
		skip("lab capi up --capi v1.8.1 --lb-check tls --deregistration on-machine-delete", capi),
		skip("lab scenario capi-issuer-placeholder --capi v1.8.4 --lb-check tls", capi),
		skip("lab scenario capi-roll --capi v1.14.2 --lb-check https-readyz", capi),
		skip("lab scenario capi-roll --capi v1.14.2 --lb-check tcp", capi),
		skip("lab scenario capi-roll --capi v1.8.1 --lb-check tls", capi),
		skip("lab scenario capi-sa-secret-deleted --capi v1.14.2", capi),
		skip("lab scenario capi-self-managed-roll --capi v1.8.1 --lb-check tls -o json", capiLong),
		skip("lab scenario capi-self-managed-roll --capi v1.14.2 --lb-check tcp -o json", capiLong),
		skip("lab scenario capi-sa-secret-deleted --capi v1.8.1", capi),
		skip("preflight --context mgmt --capi-cluster w1 --planned ./rendered", capi),
		skip("preflight --context mgmt --capi-cluster w1 -n capi-system", capi),
		skip("preflight --context mgmt --capi-cluster w1 -n capi-system --planned planned.yaml --fail-on warning", capi),
		skip("lab scenario cloud-password-rotated", cloudLab),
		skip("lab scenario key-drift", ownLab),
		skip("lab up --external-signer --signer-refresh-hint 5s", signerLab),
		skip("lab up --oidc-issuer", oidcLab),
		skip("lab up --nodes 1 --credential-provider-audience registry.credwatch.lab", credProvLab),
		skip("lab scenario key-drift --version v1.30.14 -o json", ownLab),
		skip("lab tenant-pods deploy --replicas 2", nodes),
		skip("lab tenant-pods tally --since 30s", nodes),
		skip("lab up --members 3 --nodes 2", nodes),
	}
}

// TestExamplesClassified: every example of the help and the docs is in classes(), once, and every
// row of classes() is an example. A new example is run, or skipped for a reason someone wrote.
func TestExamplesClassified(t *testing.T) {
	rows := map[string]classified{}
	for _, c := range classes() {
		if _, dup := rows[c.cmd]; dup {
			t.Errorf("classes(): %q is listed twice", c.cmd)
		}
		if (c.class == skipped) != (c.why != "") {
			t.Errorf("classes(): %q: a skipped example, and only one, says why", c.cmd)
		}
		rows[c.cmd] = c
	}
	seen := map[string]bool{}
	for _, ex := range examples(t) {
		c, ok := rows[ex.cmd]
		switch {
		case !ok:
			t.Errorf("%s: %q is not classified: add it to classes() (examples_class_test.go) to run "+
				"offline, on the lab, or skip it with the reason", ex.where, ex.cmd)
		case ex.piped && c.stdin == "" && c.class == runOffline:
			t.Errorf("%s: %q reads another program's output: give the file that stands for it (offlineFed)", ex.where, ex.cmd)
		}
		seen[ex.cmd] = true
	}
	n := map[class]int{}
	for _, c := range classes() {
		if !seen[c.cmd] {
			t.Errorf("classes(): %q is no example of the help or the docs: remove it", c.cmd)
		}
		n[c.class]++
	}
	t.Logf("example commands: %d run offline, %d on the lab, %d skipped", n[runOffline], n[runOnLab], n[skipped])
}
