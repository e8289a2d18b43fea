// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package signer runs a lab member's external JWT signer (KEP-740): the lab program
// external-jwt-signer (hack/labbin/signer), which serves the published k8s.io/externaljwt v1 gRPC
// API on a Unix socket that the member's kube-apiserver names with
// --service-account-signing-endpoint. What the signer serves — its key set, the key it signs
// with, the refresh hint, the max token lifetime, and which RPCs fail — is its Control, written
// to a control file the program reads again whenever it changes, so a scenario steers a running
// signer with Set or Update.
package signer

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// Binary is the program's name among the lab binaries (of the v1.36.3 line).
const Binary = "external-jwt-signer"

// Defaults of a new signer's Control.
const (
	// DefaultRefreshHint is the refresh_hint_seconds FetchKeys answers: kube-apiserver fetches
	// the keys again this often (and at once for a token whose kid it does not know).
	DefaultRefreshHint = 60
	// DefaultMaxTokenExpiration is Metadata's max_token_expiration_seconds (one day; at least
	// 600 or kube-apiserver does not start). kube-apiserver makes it its
	// --service-account-max-token-expiration when that flag is unset.
	DefaultMaxTokenExpiration = 24 * 3600
)

// maxSocketPath is the longest path a Unix socket may have on Linux (sun_path is 108 bytes,
// with the terminating NUL).
const maxSocketPath = 107

// Control is what the signer serves (the program's control file, JSON).
type Control struct {
	// Keys are what FetchKeys returns, in order: PEM files, each a private or a public key. The
	// key id is kube-apiserver's own for that key, so a signer serving the lab's shared sa.key
	// serves the kid members with key files use.
	Keys []Key `json:"keys"`
	// SignKeyFile is the PEM private key Sign uses; empty: the first of Keys that has a private
	// half and is not excluded from OIDC discovery.
	SignKeyFile               string     `json:"signKeyFile,omitempty"`
	RefreshHintSeconds        int64      `json:"refreshHintSeconds"`
	MaxTokenExpirationSeconds int64      `json:"maxTokenExpirationSeconds"`
	DataTimestamp             *time.Time `json:"dataTimestamp,omitempty"` // default: when the control file was written
	// Fail makes RPCs answer codes.Unavailable with the given message.
	Fail Failures `json:"fail,omitzero"`
}

// Key is one key of FetchKeys' answer.
type Key struct {
	File string `json:"file"`
	// ExcludeFromOIDCDiscovery: verify tokens with it, do not publish it nor sign with it (a
	// legacy or retired key).
	ExcludeFromOIDCDiscovery bool `json:"excludeFromOIDCDiscovery,omitempty"`
}

// Failures are RPCs made to fail: a non-empty message is the codes.Unavailable status they
// answer.
type Failures struct {
	FetchKeys string `json:"fetchKeys,omitempty"`
	Sign      string `json:"sign,omitempty"`
	Metadata  string `json:"metadata,omitempty"`
}

// ForKey is the Control of a signer that serves and signs with one key (a PEM private key file),
// with the default refresh hint and lifetime. Its data timestamp is when the key file was written
// (the key store's own time, the same for every signer serving that file), or, when the file
// cannot be read, when the control file is.
func ForKey(file string) Control {
	c := Control{Keys: []Key{{File: file}}, RefreshHintSeconds: DefaultRefreshHint, MaxTokenExpirationSeconds: DefaultMaxTokenExpiration}
	if fi, err := os.Stat(file); err == nil {
		t := fi.ModTime().UTC()
		c.DataTimestamp = &t
	}
	return c
}

// Launch starts the program with args, its output appended to logFile (the lab runs it on the
// member's host).
type Launch func(args []string, logFile string) (*proc.Proc, error)

// Signer is one running signer.
type Signer struct {
	name, dir string
	p         *proc.Proc
	mu        sync.Mutex
	ctl       Control
}

// Start writes c to <dir>/control.json and starts the signer on <dir>/signer.sock, and waits
// (up to wait) until the socket accepts connections.
func Start(ctx context.Context, name, dir string, c Control, launch Launch, wait time.Duration) (*Signer, error) {
	s := &Signer{name: name, dir: dir, ctl: c}
	if len(s.Socket()) > maxSocketPath {
		return nil, fmt.Errorf("%s: socket path %s is longer than %d bytes: use a shorter lab directory", name, s.Socket(), maxSocketPath)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := writeControl(s.ControlFile(), c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	_ = os.Remove(s.Socket())
	p, err := launch([]string{"--socket=" + s.Socket(), "--control=" + s.ControlFile()}, s.LogFile())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.p = p
	err = p.WaitUntil(ctx, "serving", wait, 100*time.Millisecond, func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", s.Socket())
		if err != nil {
			return err
		}
		return conn.Close()
	})
	if err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return s, nil
}

// Name is the signer's name (signer-N on host N).
func (s *Signer) Name() string { return s.name }

// Socket is the path kube-apiserver's --service-account-signing-endpoint names.
func (s *Signer) Socket() string { return filepath.Join(s.dir, "signer.sock") }

// ControlFile is the control file the program reads.
func (s *Signer) ControlFile() string { return filepath.Join(s.dir, "control.json") }

// LogFile is the program's log: every RPC and every control change, by key id.
func (s *Signer) LogFile() string { return filepath.Join(s.dir, "signer.log") }

// PID is the program's process id (0 when stopped).
func (s *Signer) PID() int {
	if s == nil || s.p == nil {
		return 0
	}
	return s.p.PID()
}

// Control is what the signer serves now.
func (s *Signer) Control() Control {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ctl
	c.Keys = append([]Key(nil), c.Keys...)
	return c
}

// Set makes the signer serve c from its next RPC on.
func (s *Signer) Set(c Control) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := writeControl(s.ControlFile(), c); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.ctl = c
	return nil
}

// Update changes what the signer serves with f.
func (s *Signer) Update(f func(*Control)) error {
	c := s.Control()
	f(&c)
	return s.Set(c)
}

// Proc is the program's process (nil for a nil Signer).
func (s *Signer) Proc() *proc.Proc {
	if s == nil {
		return nil
	}
	return s.p
}

// Stop stops the program (a nil Signer is stopped).
func (s *Signer) Stop(grace time.Duration) {
	if s == nil {
		return
	}
	s.p.Stop(grace)
}

// writeControl replaces file with c at once (the program never reads half a file).
func writeControl(file string, c Control) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write control file: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("write control file: %w", err)
	}
	return nil
}
