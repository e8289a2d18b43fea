// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/cloudlab/steps"
)

// CloudLabProgram is the program that runs the cloud scenarios.
const CloudLabProgram = "credwatch-cloudlab"

// maxCloudEvidence bounds what the program's stdout may hold (its evidence is tens of KB).
const maxCloudEvidence = 16 << 20

// CloudEra is a cloud era's lab (see cloudlab.Eras): a lab of one member and one node beside a
// vCenter simulator or a real Keystone, with the scenario's steps, run by the credwatch-cloudlab
// program. The steps' evidence becomes Evidence.Cloud.
type CloudEra struct {
	// Era is one of cloudlab.Eras.
	Era string
	// Version is the line the era's lab runs when it is not lab.DefaultVersion (the in-tree
	// era's lab.InTreeCloudVersion); the program chooses it, RunOptions.Version does not.
	Version string
}

// String is "cloud ERA (LINE)".
func (c CloudEra) String() string { return "cloud " + c.Era + " (" + c.line() + ")" }

// StartsOn is c.Version.
func (c CloudEra) StartsOn() string { return c.Version }

func (c CloudEra) line() string {
	if c.Version == "" {
		return lab.DefaultVersion
	}
	return c.Version
}

// Run runs s in the credwatch-cloudlab program, which brings the era's lab up and tears it down
// itself (on SIGTERM too: a cancelled run is asked to stop, never killed, so nothing it started
// stays behind).
func (c CloudEra) Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error) {
	if err := checkLine(s.Name, c.Version, o.Version); err != nil {
		return nil, err
	}
	prog, err := cloudLabProgram(o.CloudLab)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	window := o.Window
	if window <= 0 {
		window = DefaultWindow
	}
	args := []string{"-era", c.Era, "-dir", o.Dir, "-window", window.String()}
	if o.BinDir != "" {
		args = append(args, "-bin-dir", o.BinDir)
	}
	if o.Log == nil {
		args = append(args, "-q")
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdout = &capped{w: &out, left: maxCloudEvidence}
	cmd.Stderr = o.Log
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Minute
	ev := newEvidence(s, c.line())
	runErr := cmd.Run()
	if out.Len() > 0 {
		var c steps.Evidence
		if err := json.Unmarshal(out.Bytes(), &c); err != nil {
			return nil, errors.Join(runErr, fmt.Errorf("scenario %s: the evidence %s printed: %w", s.Name, prog, err))
		}
		c.Scenario = s.Name
		ev.Cloud = &c
	}
	finish(ev)
	if runErr != nil {
		return ev, fmt.Errorf("scenario %s: %s: %w", s.Name, prog, runErr)
	}
	if ev.Cloud == nil {
		return ev, fmt.Errorf("scenario %s: %s printed no evidence", s.Name, prog)
	}
	return ev, nil
}

// cloudLabProgram is path when set, else credwatch-cloudlab beside this executable, else on PATH.
func cloudLabProgram(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), CloudLabProgram)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(CloudLabProgram)
	if err != nil {
		return "", fmt.Errorf("%s not found beside credwatch or on PATH: `make build` builds it into bin/", CloudLabProgram)
	}
	return p, nil
}

// capped writes to w until left bytes are written, then fails the writes (the program then
// stops on a broken pipe).
type capped struct {
	w    io.Writer
	left int
}

func (c *capped) Write(p []byte) (int, error) {
	if len(p) > c.left {
		return 0, fmt.Errorf("more than %d bytes of evidence", maxCloudEvidence)
	}
	c.left -= len(p)
	return c.w.Write(p)
}
