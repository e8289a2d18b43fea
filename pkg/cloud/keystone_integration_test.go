package cloud

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
)

// keystone is a real Keystone (Debian's python3-keystone under uwsgi) started by
// hack/keystone/start.sh, with SQLite and fernet tokens on 127.0.0.1.
type keystone struct {
	env map[string]string
}

func startKeystone(t *testing.T) *keystone {
	t.Helper()
	script, err := filepath.Abs("../../hack/keystone/start.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, dir)
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() {
		stop := exec.Command(filepath.Join(filepath.Dir(script), "stop.sh"), dir)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Logf("stop keystone: %v: %s", err, out)
		}
	})
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log", "manage.log"))
		t.Fatalf("start keystone (needs python3-keystone and uwsgi-plugin-python3: run hack/deps.sh as root): %v\n%s\n%s", err, out,
			truncate(string(log), 4000))
	}
	f, err := os.Open(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := &keystone{env: map[string]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k2, v, ok := strings.Cut(sc.Text(), "="); ok {
			k.env[k2] = v
		}
	}
	return k
}

// resetPassword is what the admin does: PATCH /v3/users/{id} as admin, through gophercloud.
func (k *keystone) resetPassword(ctx context.Context, t *testing.T, newPassword string) {
	t.Helper()
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: k.env["KEYSTONE_URL"],
		Username: "admin", Password: k.env["ADMIN_PASSWORD"], DomainID: "default",
		Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainID: "default"}})
	if err != nil {
		t.Fatalf("admin login: %v", err)
	}
	id, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatalf("identity client: %v", err)
	}
	if _, err := users.Update(ctx, id, k.env["SERVICE_USER_ID"], users.UpdateOpts{Password: newPassword}).Extract(); err != nil {
		t.Fatalf("reset password: %v", err)
	}
}

func TestIntegrationKeystoneRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: real Keystone")
	}
	k := startKeystone(t)
	ctx := context.Background()
	conf := filepath.Join(t.TempDir(), "cloud.conf")
	body := fmt.Sprintf("[Global]\nauth-url = %s\nusername = %s\npassword = %q\ntenant-name = %s\ndomain-name = Default\nregion = RegionOne\n\n[LoadBalancer]\nuse-octavia = true\n",
		k.env["KEYSTONE_URL"], k.env["SERVICE_USER"], k.env["SERVICE_PASSWORD"], k.env["SERVICE_PROJECT"])
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	test := func() TestResult {
		t.Helper()
		cfg, err := LoadFile(conf)
		if err != nil || cfg.Provider != OpenStack || len(cfg.Credentials) != 1 {
			t.Fatalf("load %s: %v %+v", conf, err, cfg)
		}
		return NewTester(LoginOptions{Interval: time.Millisecond, Timeout: time.Minute}).Test(ctx, cfg.Credentials[0])
	}
	if r := test(); r.Verdict != Valid {
		t.Fatalf("before rotation: %+v, want valid", r)
	}
	k.resetPassword(ctx, t, "rotated-"+k.env["SERVICE_PASSWORD"])
	r := test()
	if r.Verdict != Rejected || r.Fault != "HTTP 401" {
		t.Fatalf("after rotation: %+v, want rejected with HTTP 401", r)
	}
	if strings.Contains(r.Detail, k.env["SERVICE_PASSWORD"]) {
		t.Fatalf("detail carries the password: %s", r.Detail)
	}
	t.Logf("rejected: %s", r.Detail)
	// clouds.yaml with the old password: rejected too.
	cy := filepath.Join(t.TempDir(), "clouds.yaml")
	yml := fmt.Sprintf("clouds:\n  openstack:\n    auth:\n      auth_url: %s\n      username: %s\n      password: %q\n      project_name: %s\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: RegionOne\n",
		k.env["KEYSTONE_URL"], k.env["SERVICE_USER"], k.env["SERVICE_PASSWORD"], k.env["SERVICE_PROJECT"])
	if err := os.WriteFile(cy, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFile(cy)
	if err != nil || len(cfg.Credentials) != 1 {
		t.Fatalf("load clouds.yaml: %v %+v", err, cfg)
	}
	if r := NewTester(LoginOptions{Timeout: time.Minute}).Test(ctx, cfg.Credentials[0]); r.Verdict != Rejected {
		t.Fatalf("clouds.yaml after rotation: %+v, want rejected", r)
	}
}
