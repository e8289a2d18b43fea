// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package app

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
)

// TestHostileInputs feeds credwatch servers on 127.0.0.1 that stream, hang or answer HTML, and
// files far too large, and asserts what docs/exit-codes.md promises: the exit code, one error
// line naming the input, and (for the streaming server) memory bounded by the response cap.
func TestHostileInputs(t *testing.T) {
	endless := hostileServer(t, endlessJSON)
	endlessLists := hostileServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"major":"1","minor":"36","gitVersion":"v1.36.0"}`)
			return
		}
		endlessJSON(w, r)
	})
	html := hostileServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>"+strings.Repeat("x", 499)+"</html>") // 512 bytes
	})
	arrayJSON := hostileServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `["not","an","object"]`)
	})
	var hung atomic.Int64
	hanging := hostileServer(t, func(_ http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		<-r.Context().Done()
	})
	dir := t.TempDir()
	big := sparse(t, filepath.Join(dir, "big"), 200<<20)
	noContext := filepath.Join(dir, "no-context")
	if err := os.WriteFile(noContext, []byte("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\ncurrent-context: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string        // a part of the one stderr line
		maxRSS int64         // when set, the most the run may add to the peak RSS
		probes *atomic.Int64 // when set, the requests the server must have seen: 1
		skips  bool          // stderr is one "skipped <check>: <reason>" line per check, not an error
	}{
		{"endless JSON", []string{"check", "--kubeconfig", kubeconfig(t, endless), "--no-cloud", "--timeout", "30s"}, cli.ExitUnreachable,
			endless + "/version larger than 16 MiB", 300 << 20, nil, false},
		{"endless JSON lists", []string{"check", "--kubeconfig", kubeconfig(t, endlessLists), "--no-cloud", "--timeout", "30s"}, cli.ExitUnreachable,
			"larger than 16 MiB", 300 << 20, nil, true},
		{"hanging server", []string{"check", "--kubeconfig", kubeconfig(t, hanging), "--no-cloud", "--timeout", "1s"}, cli.ExitUnreachable,
			"https://" + hanging + "/version: no answer within 1s", 0, &hung, false},
		{"HTML", []string{"check", "--kubeconfig", kubeconfig(t, html), "--no-cloud", "--timeout", "5s"}, cli.ExitUnreachable,
			"https://" + html + "/version: not a Kubernetes API response (HTML, 512 bytes)", 0, nil, false},
		{"JSON that is not an object", []string{"cloud", "--kubeconfig", kubeconfig(t, arrayJSON), "--timeout", "5s"}, cli.ExitUnreachable,
			"not a Kubernetes API response (JSON, 21 bytes)", 0, nil, false},
		{"200 MB token file", []string{"check", "--token-file", big, "--kubeconfig", kubeconfig(t, html)}, cli.ExitUsage, "--token-file " + big + ": larger than 64 KiB", 0, nil, false},
		{"200 MB token to inspect", []string{"token", "inspect", big}, cli.ExitUsage, big + ": token too large: larger than 64 KiB", 0, nil, false},
		{"200 MB key file", []string{"keys", "diff", big, keyDir + "/kubernetes/rsa.pub"}, cli.ExitUsage, big + ": larger than 4 MiB", 0, nil, false},
		{"200 MB bearer token file", []string{"keys", "diff", "https://" + html, keyDir + "/kubernetes/rsa.pub", "--bearer-token-file", big}, cli.ExitUsage,
			"--bearer-token-file " + big + ": larger than 64 KiB", 0, nil, false},
		{"200 MB kubeconfig", []string{"check", "--kubeconfig", big}, cli.ExitUsage, "kubeconfig " + big + ": larger than 16 MiB", 0, nil, false},
		{"kubeconfig without a context", []string{"check", "--kubeconfig", noContext}, cli.ExitUsage, "kubeconfig " + noContext + ": no usable context", 0, nil, false},
		{"timeout 0", []string{"check", "--timeout", "0s", "--kubeconfig", kubeconfig(t, html)}, cli.ExitUsage, "--timeout 0s: must be positive", 0, nil, false},
		{"negative timeout", []string{"cloud", "--timeout", "-1s", "--kubeconfig", kubeconfig(t, html)}, cli.ExitUsage, "--timeout -1s: must be positive", 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			before := peakRSS(t, tt.maxRSS > 0)
			code := Main(append([]string{"credwatch"}, tt.args...), strings.NewReader(""), &out, &errOut)
			if tt.maxRSS > 0 && raceEnabled {
				t.Logf("peak RSS not bounded under -race (the detector's shadow memory)")
			} else if tt.maxRSS > 0 {
				grew := peakRSS(t, false) - before
				t.Logf("peak RSS grew by %d MiB (bound %d MiB)", grew>>20, tt.maxRSS>>20)
				if grew > tt.maxRSS {
					t.Errorf("peak RSS grew by %d MiB, more than %d MiB", grew>>20, tt.maxRSS>>20)
				}
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.code, errOut.String())
			}
			lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
			if tt.skips {
				for _, l := range lines {
					if !strings.HasPrefix(l, "skipped ") || strings.Contains(l, "Please retry") {
						t.Errorf("stderr line %q, want a skip reason in credwatch's words", l)
					}
				}
				if !strings.Contains(errOut.String(), tt.stderr) {
					t.Errorf("stderr %q does not say %q", errOut.String(), tt.stderr)
				}
				return
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "credwatch: error: ") || !strings.Contains(lines[0], tt.stderr) {
				t.Errorf("stderr %q, want one error line containing %q", errOut.String(), tt.stderr)
			}
			if tt.probes != nil && tt.probes.Load() != 1 {
				t.Errorf("the server saw %d requests, want 1 (the /version probe)", tt.probes.Load())
			}
		})
	}
}

// hostileServer is an HTTPS server on 127.0.0.1 with h; it returns host:port.
func hostileServer(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = nil
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// endlessJSON streams a JSON list that never ends, until the client goes away.
func endlessJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	chunk := bytes.Repeat([]byte(`{"metadata":{"name":"x"}},`), 2048)
	if _, err := io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","items":[`); err != nil {
		return
	}
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// sparse creates a file of size bytes that takes no disk space.
func sparse(t *testing.T, path string, size int64) string {
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// peakRSS is the process's peak resident set (VmHWM), reset first when reset is set and the
// kernel allows it; where /proc is missing it falls back to the Go runtime's memory obtained
// from the OS, which only grows.
func peakRSS(t *testing.T, reset bool) int64 {
	if reset {
		runtime.GC()
		// 5 resets VmHWM to the current RSS. Without the reset the peak would be an earlier test's,
		// and the growth measured against it could be 0 whatever this case did.
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			if _, statErr := os.Stat("/proc/self/status"); statErr == nil {
				t.Fatalf("reset the peak RSS: %v (the RSS bound cannot be measured without it)", err)
			}
		}
	}
	f, err := os.Open("/proc/self/status")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Log("no /proc/self/status: measuring the runtime's Sys instead")
	return int64(ms.Sys)
}
