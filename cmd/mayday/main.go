// Command mayday simulates fleets of autonomous agents under injected failures, drives them
// through the recovery engine, and measures whether recovery works and what it costs.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/mayday-sim/mayday/analysis"
)

// version is set at build time (-ldflags "-X main.version=..."); without it, version.go takes
// it from the build information the Go toolchain records.
var version = "dev"

func main() {
	analysis.LimitGoHeap()
	analysis.TuneMalloc()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	stopProfile := startCPUProfile(os.Getenv("MAYDAY_CPUPROFILE"))
	code := execute(ctx)
	stopProfile()
	stop()
	os.Exit(code)
}

// startCPUProfile writes a CPU profile of the whole command to path (MAYDAY_CPUPROFILE, for
// `go tool pprof`; docs/performance.md) and returns what stops it; with path "" it does
// nothing. A profile that cannot start is reported and the command runs without it.
func startCPUProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mayday: MAYDAY_CPUPROFILE:", err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "mayday: MAYDAY_CPUPROFILE:", err)
		}
	}
}

// execute runs the command line. A panic is a bug, not bad input: it exits 3 (Go's own
// exit status for a panic, 2, would read as bad input), after the deferred clean-ups of
// the panicking command (its staging folder) have run.
func execute(ctx context.Context) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "mayday: internal error (a bug, please report it): %v\n%s", r, debug.Stack())
			code = 3
		}
	}()
	err := runRoot(ctx, newRootCmd(systemIO()))
	return exitCode(afterSignal(ctx, err), os.Stderr)
}

// exitCode prints err (without a stack trace) and maps it to mayday's exit codes:
// 0 ok, 1 an expectation failed, 2 bad input or usage (only errors marked with badInput),
// 3 an internal failure or any error nobody marked, 130 interrupted (SIGINT, SIGTERM or SIGHUP,
// whenever it arrives; the message says what was stored). An unmarked error is never taken
// for the user's mistake: a bug must not tell the user to fix their input.
func exitCode(err error, stderr interface{ Write([]byte) (int, error) }) int {
	if err == nil {
		return 0
	}
	var stopped *interruptedError
	if errors.As(err, &stopped) {
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
	var bad *badInputError
	if !errors.As(err, &internal) && errors.As(err, &bad) {
		return 2
	}
	return 3
}

// afterSignal makes any command that saw SIGINT, SIGTERM or SIGHUP exit 130, whenever the signal
// came: the commands that write say what they stored themselves; for the others the signal
// either cut them short (err) or came after they finished.
func afterSignal(ctx context.Context, err error) error {
	var stopped *interruptedError
	if ctx.Err() == nil || errors.As(err, &stopped) {
		return err
	}
	if err != nil {
		return interrupted("%v", err)
	}
	return interrupted("the signal came after the command had finished; its output is complete")
}

// interruptedError reports a command stopped by SIGINT, SIGTERM or SIGHUP (exit 130); its message
// says exactly what was stored, and only that.
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return "interrupted; " + e.msg }

func interrupted(format string, a ...any) error {
	return &interruptedError{fmt.Sprintf(format, a...)}
}

// errQueryInterrupted: query and the other read-only commands never write anything.
var errQueryInterrupted = interrupted("nothing was written")

// expectationError reports that a check ran and at least one expectation did not hold.
type expectationError struct{ msg string }

func (e *expectationError) Error() string { return e.msg }

// badInputError marks a mistake in what the user gave (flags, arguments, scenario files,
// run folders, queries): exit 2. Like cli/cli's cmdutil.FlagError, it is the only way to
// exit 2, so every place that judges input says so explicitly.
type badInputError struct{ err error }

func (e *badInputError) Error() string { return e.err.Error() }
func (e *badInputError) Unwrap() error { return e.err }

// badInput marks err as the user's mistake; nil stays nil.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &badInputError{err}
}

// badInputf is fmt.Errorf marked as the user's mistake.
func badInputf(format string, a ...any) error { return badInput(fmt.Errorf(format, a...)) }

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
