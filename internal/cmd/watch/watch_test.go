package watch

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/watch"
)

func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"fail-on", []string{"--fail-on", "loud"}, "--fail-on"},
		{"interval", []string{"--interval", "0s"}, "--interval"},
		{"duration", []string{"--duration", "-1s"}, "--duration"},
		{"live", []string{"--live", "sometimes"}, "--live"},
		{"listen", []string{"--listen", "nonsense"}, "--listen"},
		{"output", []string{"-o", "yaml"}, "output format"},
		{"probe sa", []string{"--probe-serviceaccount", "x"}, "--probe-serviceaccount"},
		{"endpoint", []string{"--endpoint", "http://10.0.0.1"}, "--endpoint"},
		{"token file", []string{"--token-file", "/nonexistent/token"}, "--token-file"},
		{"log file", []string{"--log-file", "/var/log/x.log"}, "--log-file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			cmd.SetArgs(append([]string{"--kubeconfig", "/nonexistent"}, tt.args...))
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			err := cmd.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if cli.Code(err) != cli.ExitUsage {
				t.Errorf("exit %d, want 2", cli.Code(err))
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty: %s", out.String())
			}
		})
	}
}

func TestExitFor(t *testing.T) {
	for _, tt := range []struct {
		worst, failOn catalogue.Severity
		want          int
	}{
		{"", catalogue.Info, cli.ExitOK},
		{catalogue.Warning, catalogue.Error, cli.ExitOK},
		{catalogue.Error, catalogue.Error, cli.ExitFindings},
		{catalogue.Critical, catalogue.Warning, cli.ExitFindings},
		{catalogue.Info, catalogue.Info, cli.ExitFindings},
	} {
		if got := cli.Code(ExitFor(watch.Summary{Worst: tt.worst}, tt.failOn)); got != tt.want {
			t.Errorf("worst %q fail-on %q: exit %d, want %d", tt.worst, tt.failOn, got, tt.want)
		}
	}
}
