// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package watch implements `credwatch watch`: ask every member every interval, and report what
// changed — members joining and leaving, trust broken and restored, findings raised and cleared.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/check/memberflags"
	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/watch"
)

type options struct {
	streams cli.Streams
	kube    *cli.KubeFlags
	output  *cli.OutputFlag
	members *memberflags.Flags

	interval time.Duration
	duration time.Duration
	failOn   cli.FailOn
	listen   string
	events   bool
	report   string
	live     string
	labDir   string
	logFiles []string
	podLogs  bool
	// auditLogs are --audit-log HOST=PATH; auditSAs is --audit-serviceaccounts.
	auditLogs []string
	auditSAs  int
	// capi names a Cluster API Cluster on the management cluster the kubeconfig reaches
	// (--capi-cluster NAME -n NAMESPACE): its workload cluster is watched, its members related to
	// its Machines, its KubeadmControlPlane read every interval.
	capi       *cli.CAPIClusterFlags
	clusterRef *clusterapi.Ref

	cfg watch.Config
	// reportFile is --report, opened in complete so that an unwritable path is a usage error
	// before the watch rather than a lost timeline after it; reportNew says complete created it.
	reportFile *os.File
	reportNew  bool
}

// defaultInterval is --interval's default, and so --timeout's.
const defaultInterval = 5 * time.Second

// NewCommand returns `credwatch watch`.
func NewCommand(s cli.Streams) *cobra.Command {
	cmd, _ := newCommand(s)
	return cmd
}

// newCommand returns `credwatch watch` and the options its flags set.
func newCommand(s cli.Streams) (*cobra.Command, *options) {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Watch every API server member during a roll: who joins, who leaves, which member rejects whose tokens, and since when",
		Long: strings.TrimSpace(`
Every --interval, find the members again (EndpointSlices of default/kubernetes, kube-system
static pods, --endpoint), ask each directly (/version, /readyz?verbose, discovery, JWKS, and
/metrics about every 15 s), mint a probe token through each and have every member review it, and
review the held tokens again: one minted through each member when it first appears, renewed at
80 % of its lifetime like a pod's projected token. The checks are credwatch check's (members,
readiness, key, issuer and audience drift, public issuer); watch reports what changed as events:
member joined/left/down/up/unready/ready, trust broken/restored per signer→verifier pair, held
token broken/restored, keys/issuer/version changed, auth failures rising, finding raised/cleared.
The members' own logs are followed too: static pods' kube-apiserver logs through the API
(--pod-logs), and files with --log-file HOST=PATH (from their end, across rotation and
truncation). A cause the logs classifier finds in new lines is a log-cause-appeared event,
cleared after 3 intervals (at least 30 s) without another line naming it. Audit logs named with
--audit-log HOST=PATH are followed the same way: the requests their new events record with a
stale or legacy service-account token are counted per account (credwatch_serviceaccount_tokens_total,
with --listen; docs/metrics.md).

Cluster API: with the management cluster's kubeconfig, --capi-cluster NAME -n NAMESPACE watches
the workload cluster of that Cluster (through its <cluster>-kubeconfig Secret, whose inline data
alone is used), names the Machine each member runs on, and reads the KubeadmControlPlane every
interval: a roll it will not go on with (CertificatesAvailable False: from v1.13 a missing
<cluster>-sa is not generated again) is the capi-roll-blocked finding, with the Machines that wait.

Every call is bounded by --timeout, each interval by --interval plus one --timeout, so a hanging
member never stalls the loop.

Output: on a terminal a live view (members, trust matrix, held tokens, last events); piped, one
plain line per event; -o json, one JSON object per event (JSON Lines, docs/json.md).

Exit codes (at the end of --duration, or on SIGINT/SIGTERM): 3 no member answered in any
interval (the cluster was never reached); else 1 a finding or an event at or above --fail-on was
seen; else 3 the trust matrix was built in no interval (no token was reviewed); else 0.
2 usage; 130 when interrupted (unless 0); 141 when stdout is a pipe whose reader went away
(watch | head), as kubectl and stern are killed by SIGPIPE.`),
		Example: `  # watch a roll from a terminal
  credwatch watch --create-probe-sa

  # gate an upgrade: 10 minutes, fail on any error, keep the timeline
  credwatch watch --duration 10m --fail-on error -o json --report roll.html > events.jsonl

  # in the cluster: metrics for Prometheus, Events on the members
  credwatch watch --listen :9090 --events -o json

  # from the management cluster: a Cluster API workload cluster's roll, Machines and all
  credwatch watch --context mgmt --capi-cluster w1 -n org-a --create-probe-sa`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	o.kube = cli.NewNamespacedKubeFlags(fs, o.streams.Known, "namespace of the Cluster API Cluster of --capi-cluster (default: the kubeconfig context's)")
	o.output = cli.NewOutputFlag(fs, report.Table, report.JSON)
	o.members = memberflags.New(fs, o.streams.Known)
	fs.DurationVar(&o.interval, "interval", defaultInterval, "time between the starts of two intervals (at least 1s)")
	// --timeout not set is the interval, at most the kube flags' default (complete): the help says
	// so, with the default that gives, not the kube flags' own.
	timeout := fs.Lookup("timeout")
	timeout.Usage = fmt.Sprintf("timeout of each API call; not set: the --interval, at most %s", timeout.DefValue)
	timeout.DefValue = min(defaultInterval, o.kube.Timeout).String()
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: until interrupted)")
	o.failOn.Register(fs, "exit 1 when a finding at or above this severity was seen: info|warning|error|critical; none: report, never exit 1 on findings")
	fs.StringVar(&o.listen, "listen", "", "serve Prometheus metrics on ADDR/metrics, and /healthz and /readyz (e.g. :9090)")
	fs.BoolVar(&o.events, "events", false, "record Kubernetes Events when a finding appears and clears (on the member's static Pod, else default/kubernetes)")
	fs.StringVar(&o.report, "report", "", "write a self-contained HTML timeline to FILE on exit (opened at the start: a FILE that cannot be written is exit 2)")
	fs.StringVar(&o.labDir, "lab", "", "also watch the members of the credwatch lab in DIR, re-read every interval (a member is watched as soon as the lab starts it, before the EndpointSlice lists it)")
	fs.StringArrayVar(&o.logFiles, "log-file", nil, "follow a member's log file, HOST=PATH (repeatable; HOST is the member's name; a regular file that exists at the start): the causes its new lines name are events; survives rotation and truncation")
	fs.StringArrayVar(&o.auditLogs, "audit-log", nil, "follow a member's audit log, HOST=PATH (repeatable; JSON events, as --audit-log-path writes them; a regular file that exists at the start): count per service account the requests its new events record with a stale or legacy token (credwatch_serviceaccount_tokens_total, with --listen)")
	fs.IntVar(&o.auditSAs, "audit-serviceaccounts", watch.DefaultAuditServiceAccounts, "name at most N service accounts per kind in credwatch_serviceaccount_tokens_total: the first N seen keep their series, later ones are counted as serviceaccount=\"other\" (0: none named)")
	fs.BoolVar(&o.podLogs, "pod-logs", true, "follow the kube-apiserver static pods' logs through the API (needs get on pods/log in kube-system): the causes their new lines name are events")
	fs.StringVar(&o.live, "live", "auto", "redraw a live view: auto (when stdout is a terminal)|always|never (one line per event)")
	o.capi = cli.NewCAPIClusterFlag(fs, o.kube, "a Cluster API Cluster on the management cluster the kubeconfig reaches (`NAME` in -n's namespace, or NAMESPACE/NAME): watch its workload cluster (through its <cluster>-kubeconfig Secret), name the Machine each member runs on, and read its KubeadmControlPlane every interval")
	return cmd, o
}

func (o *options) complete(cmd *cobra.Command) error {
	if err := cli.CompleteReport(o.output, &o.failOn); err != nil {
		return err
	}
	if o.interval < time.Second || o.duration < 0 {
		// A shorter interval only spins a core: every interval asks every member afresh.
		return cli.Usagef("--interval %s: want at least 1s, and --duration not negative", o.interval)
	}
	switch o.live {
	case "auto", "always", "never":
	default:
		return cli.Usagef("--live %q: want auto|always|never", o.live)
	}
	if o.listen != "" {
		if _, _, err := net.SplitHostPort(o.listen); err != nil {
			return cli.Usagef("--listen %q: %w", o.listen, err)
		}
	}
	var err error
	if o.cfg.LogFiles, err = logFiles("--log-file", o.logFiles); err != nil {
		return err
	}
	if err := o.completeAuditLogs(); err != nil {
		return err
	}
	if err := o.members.Apply(cmd.Context(), &o.cfg.Check); err != nil {
		return err
	}
	if o.clusterRef, err = o.capi.Ref(); err != nil {
		return err
	}
	if o.clusterRef != nil && o.labDir != "" {
		return cli.Usagef("--capi-cluster watches a workload cluster and --lab the local lab's members: give one")
	}
	rc, err := o.kube.RESTConfig()
	if err != nil {
		return err
	}
	o.cfg.Check.REST, o.cfg.Check.Timeout = rc, o.kube.Timeout
	if !cmd.Flags().Changed("timeout") {
		o.cfg.Check.Timeout = min(o.interval, o.kube.Timeout)
	}
	o.cfg.Interval, o.cfg.Duration, o.cfg.PodLogs = o.interval, o.duration, o.podLogs
	if dir := o.labDir; dir != "" {
		endpoints, err := labEndpoints(dir)
		if err != nil {
			return cli.Usagef("--lab: %w", err)
		}
		o.cfg.Endpoints = endpoints
	}
	if err := cli.OutputNotInput(cli.Path{Flag: "--report", Path: o.report}, o.inputs()...); err != nil {
		return err
	}
	if o.report != "" {
		f, created, err := userfile.OpenWrite(o.report, 0o644)
		if err != nil {
			return cli.Usagef("--report %s: %w", o.report, err)
		}
		o.reportFile, o.reportNew = f, created
	}
	return nil
}

// inputs are the files watch reads: the kubeconfig, --log-file, --audit-log and --token-file.
func (o *options) inputs() []cli.Path {
	ps := append(o.kube.Inputs(), o.members.Inputs()...)
	for _, lf := range o.cfg.LogFiles {
		ps = append(ps, cli.Path{Flag: "--log-file " + lf.Host, Path: lf.Path})
	}
	for _, lf := range o.cfg.AuditLogs {
		ps = append(ps, cli.Path{Flag: "--audit-log " + lf.Host, Path: lf.Path})
	}
	return ps
}

// completeAuditLogs reads --audit-log as --log-file is read, and --audit-serviceaccounts.
func (o *options) completeAuditLogs() error {
	var err error
	if o.cfg.AuditLogs, err = logFiles("--audit-log", o.auditLogs); err != nil {
		return err
	}
	switch {
	case o.auditSAs < 0:
		return cli.Usagef("--audit-serviceaccounts %d: want 0 or more", o.auditSAs)
	case o.auditSAs == 0:
		o.cfg.AuditServiceAccounts = -1 // Config's 0 is the default
	default:
		o.cfg.AuditServiceAccounts = o.auditSAs
	}
	return nil
}

// logFiles reads the HOST=PATH values of flag (--log-file, --audit-log), each a file checked
// with checkLogFile.
func logFiles(flag string, raws []string) ([]watch.LogFile, error) {
	var out []watch.LogFile
	for _, raw := range raws {
		lf, err := watch.ParseLogFile(raw)
		if err != nil {
			return nil, cli.Usagef("%s: %w", flag, err)
		}
		if err := checkLogFile(lf.Path); err != nil {
			return nil, cli.Usagef("%s %s: %w", flag, raw, err)
		}
		out = append(out, lf)
	}
	return out, nil
}

// checkLogFile refuses, at the start, a --log-file that is not there (a misspelt path would
// otherwise be followed in silence, waiting for a file that never comes, as kubectl -f refuses
// it) or that is not a regular file: a FIFO or a device is never read, since reading it could
// block the interval loop (package userfile). Once watch runs, the file may be rotated or
// missing for a while; that is followed, not an error.
func checkLogFile(path string) error {
	f, err := userfile.OpenRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (the file must exist when watch starts)", err)
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func (o *options) run(ctx context.Context) (err error) {
	if o.reportFile != nil {
		defer func() {
			if err != nil && o.reportFile != nil { // the watch did not run: no report, and no empty file left
				o.reportFile.Close()
				if o.reportNew {
					os.Remove(o.report)
				}
			}
		}()
	}
	if err := o.workload(ctx); err != nil {
		return err
	}
	var timeline *watch.Timeline
	if o.report != "" {
		timeline = watch.NewTimeline()
		o.cfg.Observers = append(o.cfg.Observers, timeline)
	}
	var jl *watch.JSONLines
	switch {
	case o.output.Format == report.JSON:
		jl = watch.NewJSONLines(o.streams.Out)
		o.cfg.Observers = append(o.cfg.Observers, jl)
	case o.live == "always" || o.live == "auto" && isTerminal(o.streams.Out):
		o.cfg.Observers = append(o.cfg.Observers, watch.NewLive(o.streams.Out, 12))
	default:
		o.cfg.Observers = append(o.cfg.Observers, watch.NewLines(o.streams.Out))
	}
	stop, err := o.integrations(ctx)
	if err != nil {
		return err
	}
	defer stop()
	w, err := watch.New(o.cfg)
	if err != nil {
		return cli.Usage(err)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(heapLimit))
	}
	ctx, release := readerGone(ctx, o.streams.Out)
	defer release()
	sum := w.Run(ctx)
	var errs []error
	if timeline != nil {
		errs = append(errs, writeReport(o.reportFile, o.report, timeline, sum, o.streams.Known))
		o.reportFile = nil
	}
	if jl != nil {
		errs = append(errs, jl.Err())
	}
	o.streams.Infof("watched %d intervals of %s (a member answered in %d); worst finding or event: %s; intervals started late: %d (max %s)",
		sum.Intervals, o.interval, sum.Reached, orNone(string(sum.Worst)), sum.Slipped, sum.MaxSlip.Round(time.Millisecond))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if errors.Is(context.Cause(ctx), errReaderGone) {
		return cli.Silent(cli.ExitBrokenPipe) // as a shell reports kubectl or stern killed by SIGPIPE
	}
	return ExitFor(sum, o.failOn.Severity)
}

// workload, with --capi-cluster, turns the management cluster's configuration into the workload
// cluster's and has every interval read the Cluster API view again.
func (o *options) workload(ctx context.Context) error {
	if o.clusterRef == nil {
		return nil
	}
	ref := *o.clusterRef
	wl, rd, err := cli.Workload(ctx, o.cfg.Check.REST, ref, o.kube)
	if err != nil {
		return err
	}
	o.cfg.Check.REST = wl
	o.cfg.ClusterAPI = func(ctx context.Context) (*check.ClusterAPI, error) { return rd.ControlPlane(ctx, ref) }
	return nil
}

// heapLimit is watch's soft memory limit (unless GOMEMLIMIT is set). Every body watch reads is
// bounded (limits.Response, limits.Metrics per member), but several are read at once each
// interval, and with the default GOGC the collector let a watch against endless bodies reach
// 401 MiB of RSS; with this limit it stays at 231 MiB (the chart's memory limit is set from it).
const heapLimit = 96 << 20

// errReaderGone is the cause of a run stopped because stdout is a pipe nobody reads any more.
var errReaderGone = errors.New("stdout is a pipe with no reader")

// ExitFor maps what a watch saw to the documented exit code: 3 when no member answered in any
// interval (the cluster was never reached, or every member stayed unreachable: the member-down
// events say nothing about the roll); else 1 when a finding or an event at or above failOn was
// seen in any interval; else 3 when the trust matrix was built in no interval (the probe service
// account missing or forbidden, every call but /version hanging: the gate reviewed nothing, as
// check's partial run); else 0.
func ExitFor(sum watch.Summary, failOn catalogue.Severity) error {
	switch {
	case sum.NeverReached():
		why := sum.Unreached
		if why == "" {
			why = "no interval finished"
		}
		return cli.Unreachable(fmt.Errorf("no API server member answered in %d intervals: %s", sum.Intervals, why))
	case sum.AnyAtLeast(failOn):
		return cli.Silent(cli.ExitFindings)
	case sum.NeverTrusted():
		why := sum.Untrusted
		if why == "" {
			why = "no interval finished"
		}
		return cli.Unreachable(fmt.Errorf("the trust matrix was built in none of %d intervals, so no member's tokens were reviewed: %s", sum.Intervals, why))
	}
	return nil
}

// integrations starts --listen and --events; the returned func stops them.
func (o *options) integrations(ctx context.Context) (func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if o.listen != "" {
		b := cli.Build()
		m := watch.NewMetrics(watch.BuildInfo{Version: b.Version, Revision: b.Commit, GoVersion: b.GoVersion})
		o.cfg.Observers = append(o.cfg.Observers, m)
		ln, err := net.Listen("tcp", o.listen)
		if err != nil {
			return stop, cli.Usagef("--listen %s: %w", o.listen, err)
		}
		srv := newMetricsServer(m.Handler(), defaultServerTimeouts())
		go func() { _ = srv.Serve(ln) }()
		o.streams.Infof("serving metrics on http://%s/metrics", ln.Addr())
		stops = append(stops, func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		})
	}
	if o.events {
		ke, err := watch.NewKubeEvents(o.cfg.Check.REST)
		if err != nil {
			return stop, err
		}
		ke.Known = o.streams.Known
		o.cfg.Observers = append(o.cfg.Observers, ke)
		stops = append(stops, ke.Stop)
	}
	return stop, nil
}

// serverTimeouts bound how long a client of --listen can hold a connection.
type serverTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// defaultServerTimeouts fit a Prometheus scrape (a small page, every 15-60 s) and a probe: a
// connection that sends no request is closed after 5 s, an idle keep-alive one after 60 s.
func defaultServerTimeouts() serverTimeouts {
	return serverTimeouts{readHeader: 5 * time.Second, read: 10 * time.Second, write: 30 * time.Second, idle: 60 * time.Second}
}

// newMetricsServer serves h (--listen) with every server timeout set: without them an idle or
// silent connection stays open for as long as its client likes.
func newMetricsServer(h http.Handler, t serverTimeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.readHeader, ReadTimeout: t.read, WriteTimeout: t.write,
		IdleTimeout: t.idle, MaxHeaderBytes: 64 << 10}
}

// writeReport writes the timeline over f, the --report file opened at the start, through
// redaction as stdout is, and closes it.
func writeReport(f *os.File, path string, t *watch.Timeline, sum watch.Summary, known *redact.Known) error {
	if err := f.Truncate(0); err != nil {
		f.Close()
		return fmt.Errorf("--report %s: %w", path, err)
	}
	w := redact.NewWriter(f, known)
	if err := errors.Join(t.WriteHTML(w, sum), w.Flush()); err != nil {
		f.Close()
		return fmt.Errorf("--report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	_, ok := report.Terminal(w)
	return ok
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
