package lab

import (
	"os"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// startProc starts bin with args as a child of the lab (package proc), its output appended to logFile.
func startProc(name, bin string, args []string, logFile string) (*proc.Proc, error) {
	return proc.Start(proc.Spec{Name: name, Bin: bin, Args: args, LogFile: logFile, Env: append(os.Environ(), "GOMAXPROCS=2")})
}
