// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestOptionsConfig: the flags, and what they mean.
func TestOptionsConfig(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 18, 0, 0, 0, time.FixedZone("CET", 3600))
	dark, _ := themeNamed("dark")
	light, _ := themeNamed("light")
	base := config{dashboard: defaultDashboard, prometheus: "http://127.0.0.1:9090", out: "a.png", chromium: "chromium",
		start: now.Add(-time.Hour).UTC(), end: now.UTC(), step: 12 * time.Second, scrape: 15 * time.Second,
		timeout: 2 * time.Minute, width: 1600, theme: dark, vars: map[string][]string{}}
	for _, tc := range []struct {
		name    string
		args    []string
		want    func(c *config)
		wantErr string
	}{
		{name: "defaults", want: func(*config) {}},
		{name: "everything", args: []string{"--dashboard", "d.json", "--start", "2026-12-07T17:00:00+01:00", "--end", "1796666400.5",
			"--step", "15", "--scrape-interval", "5s", "--var", "cluster=lab", "--var", "instance=a", "--var", "instance=b=c",
			"--html", "p.html", "--title", "T", "--theme", "light", "--width", "1200", "--chromium", "/usr/bin/chromium", "--timeout", "30s"},
			want: func(c *config) {
				c.dashboard, c.html, c.title, c.chromium = "d.json", "p.html", "T", "/usr/bin/chromium"
				c.start = time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC)
				c.end = time.Date(2026, 12, 7, 18, 0, 0, 500e6, time.UTC)
				c.step, c.scrape, c.timeout, c.width, c.theme = 15*time.Second, 5*time.Second, 30*time.Second, 1200, light
				c.vars = map[string][]string{"cluster": {"lab"}, "instance": {"a", "b=c"}}
			}},
		{name: "relative range and auto step", args: []string{"--start", "now-6h", "--end", "now-30m"},
			want: func(c *config) {
				c.start, c.end, c.step = now.Add(-6*time.Hour).UTC(), now.Add(-30*time.Minute).UTC(), 66*time.Second
			}},
		{name: "no prometheus", args: []string{"--prometheus", ""}, wantErr: "--prometheus is required"},
		{name: "no out", args: []string{"--out", ""}, wantErr: "--out is required"},
		{name: "out not png", args: []string{"--out", "a.jpg"}, wantErr: "--out a.jpg: want a .png file"},
		{name: "bad start", args: []string{"--start", "yesterday"}, wantErr: `--start: "yesterday": want RFC 3339, Unix seconds, now or now-DURATION`},
		{name: "bad relative", args: []string{"--end", "now+1h"}, wantErr: `--end: "now+1h": want now or now-DURATION (now-1h)`},
		{name: "backwards", args: []string{"--start", "now", "--end", "now-1m"}, wantErr: "--end 2026-12-07T16:59:00Z is not after --start 2026-12-07T17:00:00Z"},
		{name: "bad step", args: []string{"--step", "fast"}, wantErr: `--step: "fast": want a duration (15s) or seconds`},
		{name: "bad theme", args: []string{"--theme", "blue"}, wantErr: `--theme "blue": want dark or light`},
		{name: "bad var", args: []string{"--var", "cluster"}, wantErr: `invalid value "cluster" for flag -var: want NAME=VALUE, got "cluster"`},
		{name: "argument", args: []string{"x"}, wantErr: `unexpected argument "x" (all input is by flags)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := parseFlags(append([]string{"--prometheus", "http://127.0.0.1:9090", "--out", "a.png"}, tc.args...), io.Discard)
			var c config
			if err == nil {
				c, err = o.complete(now)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := base
			want.vars = map[string][]string{}
			tc.want(&want)
			if !reflect.DeepEqual(c, want) {
				t.Errorf("config\n%+v\nwant\n%+v", c, want)
			}
		})
	}
}

func TestNewPrometheus(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"127.0.0.1:9090", "ftp://h/", "http://"} {
		if _, err := newPrometheus(u, time.Second); err == nil {
			t.Errorf("%s: no error", u)
		}
	}
	for _, u := range []string{"file://user:secret@h/", "http://user:secret@h:x/"} {
		_, err := newPrometheus(u, time.Second)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("err %v: want one without the password", err)
		}
	}
}

func TestParseQueryRange(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/query_range/config_reloads.json")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := parseQueryRange(200, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[1].Labels["status"] != "failure" || len(ss[1].Samples) != 1 ||
		ss[1].Samples[0] != (sample{T: fixtureStart.Add(20 * time.Minute), V: 1}) || len(ss[0].Samples) != 61 {
		t.Errorf("series %+v", ss)
	}
	ss, err = parseQueryRange(200, []byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},
		"values":[[1.5,"NaN"],[2.25,"+Inf"],[3,"-1e-3"]]}]}}`))
	if err != nil || len(ss) != 1 || !reflect.DeepEqual(ss[0].Samples, []sample{{T: time.UnixMilli(3000).UTC(), V: -0.001}}) {
		t.Errorf("NaN and Inf are gaps: %+v %v", ss, err)
	}
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{502, "<html>bad gateway</html>", "query_range: HTTP 502, not a Prometheus API answer: invalid character '<' looking for beginning of value"},
		{422, `{"status":"error","errorType":"execution","error":"query timed out"}`, "query_range: HTTP 422: execution: query timed out"},
		{200, `{"status":"success","data":{"resultType":"vector","result":[]}}`, `query_range: result type "vector", want matrix`},
		{200, `{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,2]]}]}}`, "query_range: malformed sample [1 2]"},
	} {
		if _, err := parseQueryRange(tc.status, []byte(tc.body)); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err %v, want %s", tc.body, err, tc.want)
		}
	}
}

func TestLastLine(t *testing.T) {
	t.Parallel()
	out := "[1:2:ERROR:dbus/bus.cc:405] Failed to connect to the bus\nreal trouble here\n[3:4:ERROR:dbus/object_proxy.cc] x\n\n"
	if got := lastLine(out); got != ": real trouble here" {
		t.Errorf("lastLine = %q", got)
	}
	if got := lastLine("1234 bytes written to file /x.png\n"); got != "" {
		t.Errorf("lastLine = %q", got)
	}
}

// TestScreenshot runs dashshot whole against the recorded answers and headless Chromium: the PNG
// is the page's size and shows the series' colours.
func TestScreenshot(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if !testing.Short() || os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: hack/deps.sh installs Debian's chromium")
		}
		t.Skip("chromium is not installed (hack/deps.sh installs Debian's chromium): skipped under -short")
	}
	if testing.Short() {
		t.Skip("runs Chromium: skipped under -short")
	}
	srv := httptest.NewServer(&fakePrometheus{})
	defer srv.Close()
	dir := t.TempDir()
	out, page := filepath.Join(dir, "img", "shot.png"), filepath.Join(dir, "shot.html") // dashshot makes img/
	var stdout bytes.Buffer
	args := append(fixtureArgs(srv.URL, out), "--chromium", chromium, "--html", page, "--theme", "light")
	if err := run(context.Background(), args, &stdout, fixtureStart); err != nil {
		t.Fatal(err)
	}
	if want := "dashshot: wrote " + out + " (1600×1916, 11 panels)\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1600 || b.Dy() != 1916 {
		t.Errorf("PNG is %v", b)
	}
	colours := map[[3]uint32]bool{}
	for y := 0; y < img.Bounds().Dy(); y += 2 {
		for x := 0; x < img.Bounds().Dx(); x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if !colours[[3]uint32{0xf4, 0xf5, 0xf5}] || !colours[[3]uint32{0xff, 0xff, 0xff}] {
		t.Error("the PNG lacks the light theme's page and panel colours")
	}
	if !colours[[3]uint32{0x7e, 0xb2, 0x6d}] {
		t.Error("the PNG lacks the first series' green")
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("--html: %v", err)
	}

	err = run(context.Background(), append(args, "--chromium", filepath.Join(dir, "no-chromium")), &stdout, fixtureStart)
	if err == nil || !strings.Contains(err.Error(), "not found (hack/deps.sh installs it, or give --chromium PATH)") {
		t.Errorf("missing chromium: %v", err)
	}
}

// TestScreenshotFailureKeepsOut: a Chromium that fails, or writes no PNG, leaves the previous
// --out as it was and nothing beside it.
func TestScreenshotFailureKeepsOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, page := filepath.Join(dir, "shot.png"), filepath.Join(dir, "shot.html")
	if err := os.WriteFile(page, []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, script := range map[string]string{
		"exits 1":     "echo 'fake chromium: crashed' >&2; exit 1",
		"writes text": `for a; do case $a in --screenshot=*) echo 'not a png' >"${a#--screenshot=}" ;; esac; done`,
	} {
		old := []byte("the previous screenshot")
		if err := os.WriteFile(out, old, 0o644); err != nil {
			t.Fatal(err)
		}
		fake := filepath.Join(dir, "chromium")
		if err := os.WriteFile(fake, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := screenshot(context.Background(), fake, page, out, 400, 300); err == nil {
			t.Errorf("%s: no error", name)
		}
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, old) {
			t.Errorf("%s: --out is %q, %v; want the previous one", name, got, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".dashshot-*")); len(left) > 0 {
			t.Errorf("%s: left %v", name, left)
		}
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, fixtureStart); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"usage: go run ./hack/dashshot --prometheus URL --out FILE.png", "-scrape-interval duration", "-var value"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("help lacks %q:\n%s", s, out.String())
		}
	}
}
