// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// screenshot has headless Chromium load the page at htmlPath in a width × height window and write
// it as a PNG to out. Chromium runs with a profile of its own in a temporary directory and without
// its background network traffic (updates, sync), so the page, which loads nothing, is all it
// reads. The PNG is checked (it must decode to width × height pixels) before it replaces out: a
// failed run leaves the previous screenshot as it was.
func screenshot(ctx context.Context, chromium, htmlPath, out string, width, height int) error {
	bin, err := exec.LookPath(chromium)
	if err != nil {
		return fmt.Errorf("chromium %q not found (hack/deps.sh installs it, or give --chromium PATH): %w", chromium, err)
	}
	absHTML, err := filepath.Abs(htmlPath)
	if err != nil {
		return fmt.Errorf("page path: %w", err)
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	profile, err := os.MkdirTemp("", "dashshot-chromium-")
	if err != nil {
		return fmt.Errorf("chromium profile directory: %w", err)
	}
	defer os.RemoveAll(profile)
	if err := os.MkdirAll(filepath.Dir(absOut), 0o755); err != nil {
		return fmt.Errorf("--out directory: %w", err)
	}
	// Chromium writes beside out, so that the rename is within one file system.
	shot := filepath.Join(filepath.Dir(absOut), ".dashshot-"+filepath.Base(absOut))
	if err := os.Remove(shot); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the old %s: %w", shot, err)
	}
	defer os.Remove(shot)
	cmd := exec.CommandContext(ctx, bin, chromiumArgs(profile, absHTML, shot, width, height)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	cmd.WaitDelay = 5 * time.Second // a renderer left holding the output must not hold us
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("chromium: %w%s", err, lastLine(stderr.String()))
	}
	if err := checkPNG(shot, width, height); err != nil {
		return fmt.Errorf("%w%s", err, lastLine(stderr.String()))
	}
	if err := os.Rename(shot, absOut); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// checkPNG checks that Chromium wrote a PNG of width × height pixels at path.
func checkPNG(path string, width, height int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("chromium wrote no screenshot: %w", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		return fmt.Errorf("chromium's screenshot: %w", err)
	}
	if cfg.Width != width || cfg.Height != height {
		return fmt.Errorf("chromium's screenshot is %d×%d, want %d×%d", cfg.Width, cfg.Height, width, height)
	}
	return nil
}

// chromiumArgs are the flags of one headless screenshot. --no-sandbox: the lab runs as root,
// where Chromium's sandbox refuses to start, and the page is our own.
func chromiumArgs(profile, htmlPath, out string, width, height int) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--no-first-run", "--no-default-browser-check",
		"--user-data-dir=" + profile,
		fmt.Sprintf("--window-size=%d,%d", width, height),
		"--screenshot=" + out,
		"file://" + htmlPath,
	}
}

// lastLine is Chromium's last line of diagnostics that says something (not its D-Bus noise), as
// ": line", or "".
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.Contains(l, "dbus") || strings.Contains(l, "bytes written to file") {
			continue
		}
		if len(l) > 200 {
			l = l[:200] + "…"
		}
		return ": " + l
	}
	return ""
}
