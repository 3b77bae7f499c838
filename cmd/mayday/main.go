// Command mayday simulates fleets of autonomous agents under injected failures, drives them
// through the recovery engine, and measures whether recovery works and what it costs.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time (-ldflags "-X main.version=..."); without it, version.go takes
// it from the build information the Go toolchain records.
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd(systemIO()).ExecuteContext(ctx)
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err (without a stack trace) and maps it to mayday's exit codes:
// 0 ok, 1 an expectation failed, 2 bad input or usage, 3 an internal failure, 130 interrupted
// (Ctrl-C; what was simulated so far is kept, with status 'partial').
func exitCode(err error, stderr interface{ Write([]byte) (int, error) }) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errInterrupted) {
		fmt.Fprintln(stderr, "mayday:", err)
		return 130
	}
	var failed *expectationError
	if errors.As(err, &failed) {
		if failed.msg != "" {
			fmt.Fprintln(stderr, "mayday:", failed.msg)
		}
		return 1
	}
	fmt.Fprintln(stderr, "mayday:", err)
	var internal *internalError
	if errors.As(err, &internal) {
		return 3
	}
	return 2
}

// errInterrupted reports a run stopped by Ctrl-C; its run folder was kept as 'partial'.
var errInterrupted = errors.New("interrupted; the run was stored with status 'partial'")

// expectationError reports that a check ran and at least one expectation did not hold.
type expectationError struct{ msg string }

func (e *expectationError) Error() string { return e.msg }

// internalError marks a failure that is not the user's input: a bug or the environment.
type internalError struct{ err error }

func (e *internalError) Error() string { return e.err.Error() }
func (e *internalError) Unwrap() error { return e.err }

func internal(err error) error {
	if err == nil {
		return nil
	}
	return &internalError{err}
}
