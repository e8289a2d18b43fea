// Package app runs the credwatch command line: it sets up signals, builds the command tree, runs
// it and turns the result into an exit code. Only main exits.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/root"
)

// Main runs credwatch with args (args[0] is the program name) and returns the exit code.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		cancel(context.Canceled)
		if _, ok := <-sigs; ok {
			os.Exit(cli.ExitInterrupted) // second signal: leave now
		}
	}()
	err := Run(ctx, cli.Streams{In: in, Out: out, ErrOut: errOut}, args)
	if msg := cli.Message(err); msg != "" {
		name := cli.DisplayName(args[0])
		fmt.Fprintf(errOut, "%s: error: %s\n", name, msg)
	}
	code := cli.Code(err)
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) && code != cli.ExitOK {
		code = cli.ExitInterrupted
	}
	return code
}

// Run builds the command tree and executes it; tests call it directly.
func Run(ctx context.Context, s cli.Streams, args []string) error {
	cmd := root.NewCommand(cli.DisplayName(args[0]), s)
	cmd.SetArgs(args[1:])
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	c, err := cmd.ExecuteContextC(ctx)
	if err != nil {
		var ee *cli.ExitError
		if !errors.As(err, &ee) && c != nil && isFlagError(err) {
			return cli.Usage(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
		}
	}
	return err
}
