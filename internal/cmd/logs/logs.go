// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package logs implements `credwatch logs`: name the cause of every authentication failure in
// control-plane logs read from files, directories, stdin or the cluster itself.
package logs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/logs/render"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// heapLimit is the soft memory limit while logs are analysed.
const heapLimit = 40 << 20

// gcPercent is GOGC while logs are analysed (unless GOGC is set): off, so that heapLimit alone
// paces the collector.
const gcPercent = -1

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
	failOn  cli.FailOn
	kube    *cli.KubeFlags

	paths       []string
	fromCluster bool
	// clusterAlias is --cluster, for one release the deprecated spelling of --from-cluster.
	clusterAlias bool
	controllers  bool
	previous     bool
	since        time.Duration
	hosts        []string // --host: FILE=HOST, or HOST for every input
	year         int
	html         string
	evidence     int
	workers      int
	quiet        bool
	progress     string
	include      []string
	exclude      []string
	traceIDs     []string // --trace-credential
	issuedIDs    bool     // --issued-credentials

	sel       logs.FileSelect     // --include and --exclude, parsed by complete
	allHost   string              // --host HOST, parsed by complete
	hostPaths []logs.HostOverride // --host FILE=HOST, parsed by complete

	now   func() time.Time
	procs int // GOMAXPROCS, which bounds --workers
}

// workerCeiling bounds --workers on any machine: each worker lets one more input be read at
// once, holding up to two read buffers of a block plus a line (2 MiB each), and the work is
// CPU-bound, so workers beyond a few per CPU only cost memory (a million took 24 GB).
const workerCeiling = 256

// maxWorkers is the largest --workers accepted with procs CPUs: 4 per CPU, at most workerCeiling.
func maxWorkers(procs int) int { return min(4*max(procs, 1), workerCeiling) }

// NewCommand returns `credwatch logs`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s, now: time.Now, procs: runtime.GOMAXPROCS(0)}
	cmd := &cobra.Command{
		Use:   "logs [FILE|DIR|-]...",
		Short: "Name the cause of every authentication failure in control-plane logs",
		Long: strings.TrimSpace(`
Read kube-apiserver, kubelet, controller and client logs in any format the field produces (klog
text and JSON, kubectl/stern prefixes, journald/syslog, Docker json-file, CRI, audit events; plain
or gzip; files, directories, stdin), name the cause of every authentication failure from the
catalogue, aggregate per host, component, cause and minute, collect the context events that explain
a control-plane roll, and rank hypotheses with evidence and the remedy.

In a directory, read the files named like logs (*.log, *.txt, *.out, *.jsonl, *.ndjson, rotated
as .1, -20261202 or .20261202-140305, and .gz) and the files whose first lines are in a log
format; --include replaces that choice and --exclude skips files and folders. Files credwatch
wrote (reports, evidence.json, SARIF, HTML pages) are never read.

--since filters lines that have a full time (RFC 3339 with a zone); klog and syslog times have no
year or zone, so their lines are kept and counted rather than dropped on a guess.

With --from-cluster, read the kube-apiserver logs of every member through the API instead.
The spelling --cluster is a deprecated alias of --from-cluster for one release; then --cluster
becomes kubectl's kubeconfig cluster, as in watch.

With --trace-credential ID, read the files as kube-apiserver audit logs instead (JSON lines,
one log per member, the member named as above) and trace a service-account token's credential id
(JTI=<jti>, from credwatch token inspect): the member whose audit log recorded the TokenRequest
that issued it, with the service account, requester and bound object; the members where requests
authenticated with it; and the 401s its clients (source IP and user agent) got afterwards. With
--issued-credentials, list every credential id each member recorded as issued. The issue is
recorded at audit level Metadata for create on serviceaccounts/token; the bound object needs
level Request. A TokenRequest's token is never printed. Exit codes: 0 traced, 2 a file that is
not an audit log (its name and line are said), a bad id or bad flags.

Exit codes: 0 read, and no cause in the verdict at or above --fail-on (default error; none: never
exit 1 on causes); 1 a cause at or above it; 2 no input could be read or bad flags; 3 cluster
unreachable.`),
		Example: `  # the logs of every member, collected with kubectl
  credwatch logs apiserver-*.log.gz kubelet-journal.txt

  # straight from the cluster, the last two hours, with a timeline page
  credwatch logs --from-cluster --since 2h --html roll.html

  # a support bundle: the kubelet's and the apiserver's logs, not the old ones
  credwatch logs --include 'kubelet*' --include 'kube-apiserver*' --exclude old bundle/

  # for code scanning: one result per evidence line, with its file and line; fail the job on
  # a cause at warning or above
  credwatch logs -o sarif --fail-on warning /var/log/pods/ > logs.sarif

  # a kubectl cluster-info dump, one host per member; report, never fail the job
  credwatch logs --fail-on none dump/kube-system/

  # which member minted the token a client is refused with (its id from credwatch token inspect)
  credwatch logs --trace-credential JTI=6d7f8a90-0000-4000-8000-000000000001 cp-1/audit.log cp-2/audit.log cp-3/audit.log

  # a stern capture on stdin
  stern -n kube-system kube-apiserver --since 1h | credwatch logs -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := o.complete(cmd.Flags(), args)
			if err == nil && o.tracing() {
				if err = o.validateTrace(cmd.Flags()); err == nil {
					err = o.validate()
				}
				if err != nil {
					return err
				}
				return o.runTrace(cmd.Context())
			}
			if err == nil {
				err = o.validate()
			}
			if err != nil {
				return o.output.Failed(o.streams.Out, "credwatch logs", err)
			}
			return o.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	o.output = cli.NewOutputFlag(fs, report.Table, report.JSON, report.YAML, report.SARIF, report.JUnit)
	o.failOn.Register(fs, "exit 1 when a cause in the verdict is at or above this severity: info|warning|error|critical; none: report, never exit 1 on causes")
	fs.BoolVar(&o.fromCluster, "from-cluster", false, "read the kube-apiserver logs of every member through the API")
	fs.BoolVar(&o.clusterAlias, "cluster", false, "deprecated: --from-cluster")
	cli.Deprecate(fs, o.streams.ErrOut, "cluster", deprecatedCluster)
	fs.BoolVar(&o.controllers, "controllers", false, "with --from-cluster: also read kube-controller-manager and cloud-controller-manager")
	fs.BoolVar(&o.previous, "previous", false, "with --from-cluster: read the previous container instance's log")
	fs.DurationVar(&o.since, "since", 0, "only lines newer than this (e.g. 2h); lines whose time has no year or zone (klog, syslog), or none, are kept and counted; with --from-cluster the kubelet applies it")
	fs.StringArrayVar(&o.hosts, "host", nil, "host of the lines of FILE, or of every file below the directory FILE, that do not name one (`FILE=HOST`, repeatable; HOST alone: of every input; default: from the path, e.g. kube-system/kube-apiserver-cp-1/logs.txt or cp-1/kube-apiserver.log is cp-1)")
	fs.IntVar(&o.year, "year", 0, "year of year-less timestamps (klog, syslog); default: from the file's modification time")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML page with a timeline per member and cause to this file")
	fs.IntVar(&o.evidence, "evidence", 6, "evidence lines kept per host, component and cause")
	fs.IntVar(&o.workers, "workers", 0, "parallel workers (default: number of CPUs; at most 4 per CPU and 256)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no diagnostics on stderr")
	fs.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (terminal and large input), always, never")
	fs.StringArrayVar(&o.include, "include", nil, "in directories, read only the files whose path below the directory or base name matches `GLOB` (repeatable; replaces the default: files named like logs and files whose first lines are in a log format)")
	fs.StringArrayVar(&o.exclude, "exclude", nil, "in directories, skip the files and folders whose path below the directory or base name matches `GLOB` (repeatable; wins over --include)")
	fs.StringArrayVar(&o.traceIDs, "trace-credential", nil, "read the files as kube-apiserver audit logs (one per member) and trace this credential id instead: the member that recorded it as issued, the members that accepted it, the 401s its clients got (`ID`: JTI=<jti> as credwatch token inspect prints it, or the bare jti; repeatable)")
	fs.BoolVar(&o.issuedIDs, "issued-credentials", false, "read the files as kube-apiserver audit logs (one per member) and list every credential id each member recorded as issued")
	// --cluster is, for one release, the deprecated alias of --from-cluster: kubectl's is left out.
	o.kube = cli.NewKubeFlagsExcept(fs, o.streams.Known, "cluster")
	return cmd
}

// deprecatedCluster is the deprecation notice of logs' --cluster.
const deprecatedCluster = "use --from-cluster (--cluster will be kubectl's kubeconfig cluster)"

func (o *options) complete(fs *pflag.FlagSet, args []string) error {
	if fs.Changed("cluster") {
		if fs.Changed("from-cluster") && o.fromCluster != o.clusterAlias {
			return cli.Conflicting("--from-cluster="+strconv.FormatBool(o.fromCluster), "--cluster="+strconv.FormatBool(o.clusterAlias), "--from-cluster")
		}
		o.fromCluster = o.clusterAlias
	}
	o.paths = args
	if !o.fromCluster && len(args) == 0 {
		if f, ok := o.streams.In.(*os.File); ok && isTerminal(f) {
			return cli.Usagef("logs: name files or directories, '-' for stdin, or use --from-cluster")
		}
		o.paths = []string{"-"}
	}
	var err error
	if o.sel.Include, err = parseGlobs("--include", o.include); err != nil {
		return err
	}
	if o.sel.Exclude, err = parseGlobs("--exclude", o.exclude); err != nil {
		return err
	}
	if o.allHost, o.hostPaths, err = parseHosts(o.hosts); err != nil {
		return err
	}
	return cli.CompleteReport(o.output, &o.failOn)
}

// parseHosts reads the --host values: FILE=HOST for the inputs at or below FILE, or one HOST
// alone for every input.
func parseHosts(values []string) (all string, paths []logs.HostOverride, err error) {
	seen := map[string]bool{}
	for _, v := range values {
		i := strings.LastIndexByte(v, '=')
		if i < 0 {
			if all != "" {
				return "", nil, cli.Usagef("logs --host %s: a host for every input is already given (%s); name the files: --host FILE=HOST", v, all)
			}
			if all = strings.TrimSpace(v); all == "" {
				return "", nil, cli.Usagef("logs --host %q: want FILE=HOST or HOST", v)
			}
			continue
		}
		file, host := strings.TrimSpace(v[:i]), strings.TrimSpace(v[i+1:])
		switch {
		case file == "" || host == "":
			return "", nil, cli.Usagef("logs --host %s: want FILE=HOST, both not empty", v)
		case strings.ContainsAny(host, "/ \t"):
			return "", nil, cli.Usagef("logs --host %s: a host name has no slash or space", v)
		case seen[filepath.Clean(file)]:
			return "", nil, cli.Usagef("logs --host %s: %s is given a host twice", v, file)
		}
		seen[filepath.Clean(file)] = true
		paths = append(paths, logs.HostOverride{Path: file, Host: host})
	}
	return all, paths, nil
}

// parseGlobs checks the patterns of a glob flag.
func parseGlobs(flag string, patterns []string) ([]logs.Glob, error) {
	var gs []logs.Glob
	for _, p := range patterns {
		g, err := logs.ParseGlob(p)
		if err != nil {
			return nil, cli.Usage(fmt.Errorf("logs %s: %w", flag, err))
		}
		gs = append(gs, g)
	}
	return gs, nil
}

func (o *options) validate() error {
	switch {
	case o.fromCluster && len(o.paths) > 0:
		return cli.Usagef("logs: --from-cluster reads from the API; do not name files as well")
	case (o.controllers || o.previous) && !o.fromCluster:
		return cli.Usagef("logs: --controllers and --previous need --from-cluster")
	case o.fromCluster && (len(o.include) > 0 || len(o.exclude) > 0):
		return cli.Usagef("logs: --include and --exclude choose files in directories; --from-cluster reads none")
	case o.fromCluster && len(o.hostPaths) > 0:
		return cli.Usagef("logs --host %s=%s: --from-cluster reads no files; its hosts are the pods' nodes", o.hostPaths[0].Path, o.hostPaths[0].Host)
	case o.since < 0:
		return cli.Usagef("logs: --since %s: must not be negative", o.since)
	case o.evidence < 1 || o.evidence > 1000:
		return cli.Usagef("logs: --evidence %d: want 1 to 1000", o.evidence)
	case o.workers < 0:
		return cli.Usagef("logs: --workers %d: must not be negative", o.workers)
	case o.workers > maxWorkers(o.procs):
		return cli.Usagef("logs: --workers %d: at most %d here (4 per CPU, never more than %d): more only costs memory", o.workers, maxWorkers(o.procs), workerCeiling)
	case o.year != 0 && (o.year < 1970 || o.year > 9999):
		return cli.Usagef("logs: --year %d: want a four-digit year", o.year)
	}
	switch o.progress {
	case "auto", "always", "never":
	default:
		return cli.Usagef("logs: --progress %q: want auto, always or never", o.progress)
	}
	var inputs []cli.Path
	if o.fromCluster {
		inputs = o.kube.Inputs()
	}
	for i, p := range o.paths {
		inputs = append(inputs, cli.Path{Flag: "argument " + strconv.Itoa(i+1), Path: p})
	}
	return cli.OutputNotInput(cli.Path{Flag: "--html", Path: o.html}, inputs...)
}

// config turns the options into the library's configuration.
func (o *options) config(now time.Time) logs.Config {
	cfg := logs.Config{Workers: o.workers, Evidence: o.evidence, Now: now, Year: o.year}
	// With --from-cluster the kubelet sends only the lines of the window (SinceSeconds), by its own
	// clock; the API's klog lines have no year or zone to filter on again.
	if o.since > 0 && !o.fromCluster {
		cfg.Since = now.Add(-o.since)
	}
	return cfg
}

func (o *options) run(ctx context.Context) error {
	rep, err := o.analyze(ctx)
	if err != nil {
		return o.output.Failed(o.streams.Out, "credwatch logs", err)
	}
	if o.html != "" {
		if err := writeHTML(o.html, rep, o.streams.Known); err != nil {
			return o.output.Failed(o.streams.Out, "credwatch logs", err)
		}
	}
	rep.FailOn = o.failOn.Severity
	var exit error
	if rep.AnyAtLeast(o.failOn.Severity) {
		exit = cli.Silent(cli.ExitFindings)
	}
	if err := o.output.Print(o.streams.Out, render.New(rep), exit); err != nil {
		return err
	}
	return exit
}

// analyze reads the inputs and analyses them, saying on stderr what could not be read.
func (o *options) analyze(ctx context.Context) (*logs.Report, error) {
	now := o.now()
	cfg := o.config(now)
	var inputs []logs.Input
	var bad []logs.InputStatus
	var skipped []logs.SkippedFile
	if o.fromCluster {
		_, cs, err := o.kube.Clientset()
		if err != nil {
			return nil, err
		}
		sels := logs.DefaultSelectors
		if o.controllers {
			sels = append(append([]string(nil), sels...), logs.ControllerSelectors...)
		}
		inputs, err = logs.ClusterInputs(ctx, cs.CoreV1().Pods("kube-system"), logs.ClusterOptions{Selectors: sels, Since: o.since, Previous: o.previous})
		if err != nil {
			return nil, cli.Unreachable(fmt.Errorf("logs --from-cluster: %w", err))
		}
		if len(inputs) == 0 {
			return nil, cli.Unreachable(fmt.Errorf("logs --from-cluster: no kube-apiserver pods in kube-system (is this a managed control plane? read its logs from the provider instead)"))
		}
	} else {
		files := logs.FileInputs(ctx, o.paths, o.streams.In, now, o.sel)
		inputs, bad, skipped = files.Inputs, files.Bad, files.Skipped
	}
	if err := o.setHosts(inputs, bad); err != nil {
		return nil, err
	}
	// The analysis needs little heap whatever the input size; a soft limit keeps the garbage
	// collector from letting it grow towards the 100 MB RSS budget.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(heapLimit))
	// The live heap is small (5-10 MB), so the default GOGC=100 collected every 5-10 MB of the
	// line strings a dense log allocates (11 % of the CPU), and GOGC=200 still twice while a 1 GB
	// incident was read and printed. With GOGC off the collector runs only as the heap nears the
	// limit, which it did anyway whatever GOGC: none of those collections is needed.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	}
	stop := o.startProgress(&cfg, inputs)
	rep, err := logs.Analyze(ctx, cfg, inputs)
	stop()
	if err != nil {
		return nil, err
	}
	rep.Inputs = append(bad, rep.Inputs...)
	rep.Summary.Inputs += len(bad)
	rep.Skipped = skipped
	rep.ToolVersion = cli.Build().Version
	if !o.quiet {
		for _, in := range rep.Inputs {
			for _, p := range in.Problems {
				o.streams.Infof("logs: %s: %s", in.Name, p)
			}
		}
		if n := len(rep.Skipped); n > 0 && rep.Summary.InputsRead > 0 {
			files := "files"
			if n == 1 {
				files = "file"
			}
			o.streams.Infof("logs: %d %s in directories not read: %s (all in -o json's skippedFiles)", n, files, logs.SkippedSummary(rep.Skipped, 3))
		}
		if c := rep.CollapsedHosts(); len(c) > 0 {
			o.streams.Infof("logs: warning: %s: their lines name no host and their paths do not tell them apart; name each with --host FILE=HOST", logs.CollapseSummary(c))
		}
		if rep.Summary.SkippedLines > 0 {
			o.streams.Infof("logs: %d lines skipped (binary or too long)", rep.Summary.SkippedLines)
		}
		if n := rep.Summary.UnfilteredLines; n > 0 {
			o.streams.Infof("logs: --since %s: %d lines had no usable time and were not filtered (klog and syslog timestamps have no year or zone)", o.since, n)
		}
	}
	if rep.Summary.InputsRead == 0 {
		return nil, cli.Usage(noInput(rep.Inputs))
	}
	return rep, nil
}

// setHosts gives the inputs the hosts of --host: HOST alone to every input, then FILE=HOST to the
// inputs at or below FILE. A FILE that is none of the inputs (nor below a directory read) is a
// usage error, as a typo would leave the host it meant to fix collapsed.
func (o *options) setHosts(inputs []logs.Input, bad []logs.InputStatus) error {
	if o.allHost != "" {
		for i := range inputs {
			inputs[i].Host, inputs[i].HostGiven = o.allHost, true
		}
	}
	names := make([]string, len(bad))
	for i, b := range bad {
		names[i] = b.Name
	}
	if unused := logs.SetHosts(inputs, o.hostPaths, names...); len(unused) > 0 {
		return cli.Usagef("logs --host %s=%s: %s is none of the inputs and not a directory above one", unused[0].Path, unused[0].Host, unused[0].Path)
	}
	return nil
}

// noInput says why nothing could be read, naming the first input and its first problem (a
// folder with no file in it: "logs: DIR: no log files").
func noInput(ins []logs.InputStatus) error {
	for _, in := range ins {
		if len(in.Problems) == 0 {
			continue
		}
		more := ""
		if rest := len(ins) - 1; rest > 0 {
			more = fmt.Sprintf(" (and %d more inputs, none readable)", rest)
		}
		return fmt.Errorf("logs: no input could be read: %s: %s%s", in.Name, in.Problems[0], more)
	}
	return errors.New("logs: no input could be read")
}

// writeHTML writes the report's HTML to path through redaction, as stdout is.
func writeHTML(path string, rep *logs.Report, known *redact.Known) error {
	f, err := os.Create(path)
	if err != nil {
		return cli.Usage(fmt.Errorf("logs --html: %w", err))
	}
	w := redact.NewWriter(f, known)
	if err := errors.Join(render.New(rep).WriteHTML(w), w.Flush()); err != nil {
		f.Close()
		return fmt.Errorf("logs --html %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("logs --html %s: %w", path, err)
	}
	return nil
}
