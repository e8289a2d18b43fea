// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package tenants implements `credwatch lab tenants`: kubelet-like tenants hosted by a running lab's
// supervisor (`lab tenants start`) and their live per-member tallies (`lab tenants`).
package tenants

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams cli.Streams
	dir     string
	output  *cli.OutputFlag
	reset   bool
}

// NewCommand returns `credwatch lab tenants`; defaultDir is the lab directory used without --dir.
func NewCommand(s cli.Streams, defaultDir string) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "tenants",
		Short: "Show the live tallies of the lab's tenants: requests and 401s per serving member",
		Long: strings.TrimSpace(`
Tenants do the kubelet's part in the lab: pods whose projected tokens (TokenRequest, bound to the
pod, 3607 s, refreshed at 80 %) call the API through the load balancer continuously. Start them
once with 'lab tenants start'; 'lab tenants' then shows, per member that served a request, how
many requests it answered and how many with 401, and which member minted the rejected tokens.`),
		Example: `  credwatch lab up
  credwatch lab tenants start --pods 4
  credwatch lab add-member --sa-key new
  credwatch lab tenants`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.output.Complete(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	addDir(cmd.Flags(), &o.dir, defaultDir)
	cmd.Flags().BoolVar(&o.reset, "reset", false, "start counting afresh after printing")
	o.output = cli.NewOutputFlag(cmd.Flags(), report.Table, report.JSON, report.YAML)
	cmd.AddCommand(newStart(s, defaultDir))
	return cmd
}

func addDir(fs *pflag.FlagSet, dir *string, def string) {
	fs.StringVar(dir, "dir", def, "lab state directory")
}

func absDir(dir string) (string, error) {
	if dir == "" {
		return "", cli.Usagef("--dir: empty")
	}
	a, err := filepath.Abs(dir)
	if err != nil {
		return "", cli.Usagef("--dir %q: %v", dir, err)
	}
	return a, nil
}

func (o *options) run(ctx context.Context) error {
	dir, err := absDir(o.dir)
	if err != nil {
		return err
	}
	var t Tallies
	path := "/v1/services/" + ServiceName + "/tallies?reset=" + strconv.FormatBool(o.reset)
	if err := supervisor.NewClient(dir).Do(ctx, http.MethodGet, path, nil, &t); err != nil {
		return clientErr(err, dir)
	}
	return report.Print(o.streams.Out, o.output.Format, t)
}

// clientErr explains the supervisor's answers: no lab (exit 3), no tenants started (exit 2).
func clientErr(err error, dir string) error {
	var se *supervisor.Error
	if errors.As(err, &se) {
		if se.Status == http.StatusNotFound {
			return cli.Usagef("no tenants are running in the lab in %s; start them with 'credwatch lab tenants start'", dir)
		}
		return err
	}
	return cli.Unreachable(fmt.Errorf("%w (is the lab up? 'credwatch lab up --dir %s')", err, dir))
}

// WriteTable prints the tallies.
func (t Tallies) WriteTable(w io.Writer, _ report.TableOptions) error {
	s := t.Tenants
	fmt.Fprintf(w, "Tenants in namespace %s (%d pods), counting since %s: %d requests, %d 401 (%.1f%%), %d without response; %d tokens minted, %d failed TokenRequests\n",
		t.Namespace, s.Pods, report.Relative(s.Since, time.Now()), s.Requests, s.Unauthorized, 100*s.UnauthorizedRate(), s.NoResponse, s.TokensIssued, s.TokenErrors)
	tw := report.NewTabWriter(w)
	report.Row(tw, "MEMBER", "SERVED", "401", "401 RATE", "TOKENS MINTED")
	for _, m := range s.Members {
		rate := "-"
		if m.Requests > 0 {
			rate = fmt.Sprintf("%.0f%%", 100*float64(m.Unauthorized)/float64(m.Requests))
		}
		report.Row(tw, m.Member, strconv.Itoa(m.Requests), strconv.Itoa(m.Unauthorized), rate, strconv.Itoa(m.TokensMinted))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range s.Pairs {
		if p.Unauthorized > 0 {
			fmt.Fprintf(w, "  tokens minted by %s rejected by %s: %d of %d\n", orUnknown(p.MintedBy), p.ServedBy, p.Unauthorized, p.Requests)
		}
	}
	if s.LastError != "" {
		fmt.Fprintf(w, "Last error: %s\n", s.LastError)
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

type startOptions struct {
	streams      cli.Streams
	dir          string
	cfg          Config
	interval     time.Duration
	refreshEvery time.Duration
}

func newStart(s cli.Streams, defaultDir string) *cobra.Command {
	o := &startOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start tenants in the running lab (they run until 'lab down')",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	addDir(fs, &o.dir, defaultDir)
	fs.StringVarP(&o.cfg.Namespace, "namespace", "n", "tenants", "namespace the tenants create and work in")
	fs.IntVar(&o.cfg.Pods, "pods", 2, "pods, each with its own token and request loop (1..100)")
	fs.DurationVar(&o.interval, "interval", 100*time.Millisecond, "pause between two requests of one pod")
	fs.DurationVar(&o.refreshEvery, "refresh-every", 0, "re-mint every token this often (default: the kubelet's rule, 80% of 3607 s)")
	return cmd
}

func (o *startOptions) validate() error {
	if o.cfg.Pods < 1 || o.cfg.Pods > 100 {
		return cli.Usagef("--pods %d: want 1..100", o.cfg.Pods)
	}
	if o.interval < 10*time.Millisecond {
		return cli.Usagef("--interval %s: want at least 10ms", o.interval)
	}
	if o.refreshEvery < 0 {
		return cli.Usagef("--refresh-every %s: want a positive duration", o.refreshEvery)
	}
	o.cfg.Interval = o.interval.String()
	if o.refreshEvery > 0 {
		o.cfg.RefreshEvery = o.refreshEvery.String()
	}
	return nil
}

func (o *startOptions) run(ctx context.Context) error {
	dir, err := absDir(o.dir)
	if err != nil {
		return err
	}
	c := supervisor.NewClient(dir)
	if err := c.StartService(ctx, ServiceName, o.cfg); err != nil {
		var se *supervisor.Error
		if errors.As(err, &se) && se.Status == http.StatusNotFound {
			return fmt.Errorf("the lab's supervisor does not host tenants (%w); it is older than this credwatch: restart the lab", err)
		}
		if errors.As(err, &se) {
			return cli.Usage(err)
		}
		return cli.Unreachable(fmt.Errorf("%w (is the lab up? 'credwatch lab up --dir %s')", err, dir))
	}
	if err := waitRunning(ctx, c, dir); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "tenants started in namespace %s: %d pods; see 'credwatch lab tenants'\n", o.cfg.Namespace, o.cfg.Pods)
	return nil
}

// waitRunning waits, at most a minute, until the tenants the supervisor was asked to start answer
// with tallies: it starts them after answering the request, and 'lab tenants' run before then
// would only hear that they are still starting.
func waitRunning(ctx context.Context, c *supervisor.Client, dir string) error {
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for wait.Err() == nil {
		err := c.Do(wait, http.MethodGet, "/v1/services/"+ServiceName+"/tallies", nil, nil)
		var se *supervisor.Error
		switch {
		case err == nil:
			return nil
		case errors.As(err, &se) && se.Status == http.StatusServiceUnavailable:
			if st, err := c.Status(wait, false); err == nil && strings.HasPrefix(st.Services[ServiceName], "exited") {
				return fmt.Errorf("tenants in %s: %s", dir, st.Services[ServiceName])
			}
		case wait.Err() == nil:
			return clientErr(err, dir)
		}
		select {
		case <-wait.Done():
		case <-tick.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("tenants in %s still starting after a minute (see %s)", dir, filepath.Join(dir, "supervisor.log"))
}
