// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/sirupsen/logrus"
)

// startRegistry runs distribution's registry (github.com/distribution/distribution/v3, the
// reference OCI registry) in the test process on 127.0.0.1 with its filesystem storage in a
// temporary directory, and returns its host:port. It stops with the test; its directory goes.
func startRegistry(t *testing.T) string {
	t.Helper()
	cfg, err := configuration.Parse(strings.NewReader(fmt.Sprintf(`version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: %q}
  maintenance: {uploadpurging: {enabled: false}}
http: {addr: 127.0.0.1:0, secret: test-only-upload-state-key}
`, t.TempDir())))
	if err != nil {
		t.Fatal(err)
	}
	// The handlers log every request at info and each blob a push asks about before uploading it
	// (404, the normal answer) at error: the pushes and pulls report real failures themselves.
	logrus.SetLevel(logrus.FatalLevel)
	ctx, cancel := context.WithCancel(context.Background())
	app := handlers.NewApp(ctx, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		cancel()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("registry: %v", err)
		}
	})
	return ln.Addr().String()
}

var pushedRE = regexp.MustCompile(`(?m)^pushed (\S+)@(sha256:[0-9a-f]{64})$`)

// imagePush runs `make image-push REGISTRY=registry` in the repository, as a release does, and
// returns the reference and index digest it printed.
func imagePush(t *testing.T, registry string) (ref, digest string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "image-push", "REGISTRY="+registry)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make image-push: %v\n%s", err, out)
	}
	m := pushedRE.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("make image-push printed no pushed reference:\n%s", out)
	}
	return m[1], m[2]
}
