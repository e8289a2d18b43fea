package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/finding"
)

// SrcCloud is the cloud-provider credentials and their symptoms (pkg/cloud).
const SrcCloud = "cloud"

// CloudConfig says whether and how check looks at the cloud-provider credentials.
type CloudConfig struct {
	// Skip leaves the cloud out (--no-cloud): the cloud-credentials check is skipped.
	Skip bool
	// Login tests each credential live (--cloud-login). Off by default: repeated failed logins can
	// lock the service account, and a check must not risk that.
	Login bool
	// LoginOptions bound and space the live logins.
	LoginOptions cloud.LoginOptions
}

// noLoginNote is what the report says about logins when --cloud-login was not given.
const noLoginNote = "not attempted: credwatch check logs in to cloud providers only with --cloud-login (or run credwatch cloud)"

// FetchCloud runs pkg/cloud's discovery and symptom analysis against cs. It never fails the
// check: it returns the cloud report, or nil and the reason the cloud-credentials check is skipped.
func FetchCloud(ctx context.Context, cs kubernetes.Interface, c CloudConfig, now time.Time, timeout time.Duration) (r *cloud.Report, skip string) {
	if c.Skip {
		return nil, "--no-cloud"
	}
	defer func() {
		if p := recover(); p != nil {
			r, skip = nil, fmt.Sprintf("cloud discovery failed: %v", p)
		}
	}()
	r = cloud.Run(ctx, cloud.Options{Client: cs, NoLogin: !c.Login, Login: c.LoginOptions, Timeout: timeout, Now: now})
	if !c.Login {
		r.Login = noLoginNote
		for i := range r.Items {
			if r.Items[i].Test.Verdict == cloud.NotTested && r.Items[i].Test.Detail == "--no-login" {
				r.Items[i].Test.Detail = "--cloud-login not given"
			}
		}
	}
	if r.Partial && len(r.Items) == 0 && len(r.Findings) == 0 {
		return nil, "could not read the cluster's cloud configuration: " + strings.Join(r.Errors, "; ")
	}
	return r, ""
}

// Cloud is the cloud-provider part of the report: every credential found, where, who consumes
// it, its verdict ("not-tested" without --cloud-login), and what could not be read.
type Cloud struct {
	Login         string `json:"login"`
	LoginAttempts int    `json:"loginAttempts"`
	cloud.Inventory
}

func cloudOf(s *Snapshot) *Cloud {
	if s.Cloud == nil {
		return nil
	}
	return &Cloud{Login: s.Cloud.Login, LoginAttempts: s.Cloud.LoginAttempts, Inventory: s.Cloud.Inventory}
}

// checkCloud reports pkg/cloud's findings: rejected or untestable credentials, consumers that
// must restart, config problems and the symptoms (stale leases, crash-looping controllers, nodes
// left uninitialized). Findings the controllers and nodes checks already made are removed by Run.
func checkCloud(s *Snapshot) []finding.Finding {
	if s.Cloud == nil {
		return nil
	}
	out := make([]finding.Finding, 0, len(s.Cloud.Findings))
	for _, f := range s.Cloud.Findings {
		if f.ID == idNodesUninit && f.Object == "" {
			// The nodes check names a single node as the object; do the same so the two dedupe.
			for _, e := range f.Evidence {
				if e.Key == "nodes" && e.Value != "" && !strings.Contains(e.Value, ",") {
					f.Object = "node/" + e.Value
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// findingKey identifies a finding for deduplication across checks.
func findingKey(f finding.Finding) string { return f.ID + "\x00" + f.Member + "\x00" + f.Object }

// dedupe drops findings already seen (by ID, member and object) and records the rest.
func dedupe(seen map[string]bool, fs []finding.Finding) []finding.Finding {
	out := fs[:0:0]
	for _, f := range fs {
		k := findingKey(f)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	return out
}
