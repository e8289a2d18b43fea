// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
	"github.com/credwatch/credwatch/pkg/report"
)

type statusOptions struct {
	streams cli.Streams
	dir     dirFlag
	output  *cli.OutputFlag
}

func newStatus(s cli.Streams) *cobra.Command {
	o := &statusOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the lab's members, versions, key ids, issuers, flags and health",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.output.Complete(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.dir.add(cmd.Flags())
	o.output = cli.NewOutputFlag(cmd.Flags(), report.Table, report.JSON, report.YAML)
	return cmd
}

// statusView is what `lab status` prints.
type statusView struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Phase      string            `json:"phase"`
	Error      string            `json:"error,omitempty"`
	Supervisor int               `json:"supervisorPID,omitempty"`
	Lab        *lab.Status       `json:"lab,omitempty"`
	Services   map[string]string `json:"services,omitempty"`
}

func (o *statusOptions) run(ctx context.Context) error {
	dir, err := o.dir.abs()
	if err != nil {
		return err
	}
	v := statusView{APIVersion: report.APIVersion, Kind: "LabStatus"}
	st, err := supervisor.NewClient(dir).Status(ctx, true)
	if err != nil {
		s, rerr := lab.ReadState(dir)
		if errors.Is(rerr, os.ErrNotExist) {
			return cli.Usagef("no lab in %s", dir)
		}
		v.Phase, v.Error = "unsupervised", fmt.Sprintf("supervisor not running: %v", err)
		if rerr == nil {
			v.Lab = &s
		}
		if perr := report.Print(o.streams.Out, o.output.Format, v); perr != nil {
			return perr
		}
		if rerr == nil && s.Down {
			return nil
		}
		return cli.Silent(cli.ExitUnreachable)
	}
	v.Phase, v.Error, v.Supervisor, v.Lab, v.Services = st.Phase, st.Error, st.PID, st.Lab, st.Services
	return report.Print(o.streams.Out, o.output.Format, v)
}

func (v statusView) WriteTable(w io.Writer, _ report.TableOptions) error {
	fmt.Fprintf(w, "Lab:      %s (%s)\n", dirOf(v.Lab), v.Phase)
	if v.Error != "" {
		fmt.Fprintf(w, "Error:    %s\n", v.Error)
	}
	if v.Lab == nil {
		return nil
	}
	s := v.Lab
	fmt.Fprintf(w, "LB:       https://%s (mode %s)\nAdmin:    KUBECONFIG=%s\nSA key:   shared kid %s\n", s.LBAddress, s.LBMode, s.AdminKubeconfig, s.SharedSAKeyID)
	for _, c := range []struct {
		label string
		st    *lab.ProcStatus
	}{{"KCM:      ", s.ControllerManager}, {"Scheduler:", s.Scheduler}} {
		if c.st == nil {
			continue
		}
		fmt.Fprintf(w, "%s pid %d running=%t", c.label, c.st.PID, c.st.Running)
		if c.st.Restarts > 0 {
			fmt.Fprintf(w, " restarts=%d (last exit: %s)", c.st.Restarts, c.st.LastExit)
		}
		fmt.Fprintln(w)
	}
	for name, st := range v.Services {
		fmt.Fprintf(w, "Service:  %s %s\n", name, st)
	}
	fmt.Fprintln(w)
	tw := report.NewTabWriter(w)
	report.Row(tw, "MEMBER", "ADDRESS", "VERSION", "READY", "IN LB", "ETCD", "KID", "ISSUERS", "AUDIENCES", "PID")
	for _, m := range s.Members {
		etcd := m.EtcdName
		if m.EtcdRemoved {
			etcd += " (removed)"
		}
		ready := "yes"
		if !m.Ready {
			ready = "no"
			if m.Health != "" {
				ready = "no: " + m.Health
			}
		}
		report.Row(tw, m.Name, m.Address, m.Version, ready, yesNo(m.InLB), etcd, shortKID(m.KeyID),
			strings.Join(m.Issuers, ","), orDash(strings.Join(m.APIAudiences, ",")), fmt.Sprint(m.PID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = report.NewTabWriter(w)
	report.Row(tw, "ETCD", "CLIENT", "PEER", "HEALTHY", "PID")
	for _, e := range s.Etcd {
		report.Row(tw, e.Name, e.ClientURL, e.PeerURL, yesNo(e.Healthy), fmt.Sprint(e.PID))
	}
	return tw.Flush()
}

func dirOf(s *lab.Status) string {
	if s == nil {
		return "-"
	}
	return s.Dir
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shortKID(k string) string {
	if len(k) > 12 {
		return k[:12] + "…"
	}
	return orDash(k)
}

func splitLines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}
