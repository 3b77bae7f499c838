//go:build duckdb_arrow

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
)

func newRootCmd(io *ioStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "mayday",
		Short: "Does your agents' recovery policy work when things fail, and what does it cost?",
		Long: `mayday runs thousands of simulated research agents through a real recovery engine,
injects correlated failures (a shared service goes down for everyone) and uncorrelated ones
(lost replies, crashes, bad configs, runaway loops), and writes every operation into a DuckDB
database where recovery metrics are defined in SQL.

Scenarios are YAML files, or the names of the embedded examples ('mayday scenarios').`,
		Example: `  mayday run research-fleet              # the default scenario
  mayday run my-fleet.yaml --seeds 5     # five seeds, confidence intervals
  mayday query runs/research-fleet-s42 "SELECT * FROM metrics"
  mayday check scenarios/*.yaml --junit report.xml`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetFlagErrorFunc(flagError)
	// Every command of mayday ('mayday --help' lists them sorted by name). Each
	// takes a nil runF here: tests pass their own to stop after flag parsing.
	root.AddCommand(
		newVersionCmd(io),
		newRunCmd(io, nil),
		newCheckCmd(io, nil),
		newSweepCmd(io, nil),
		newTuneCmd(io, nil),
		newHuntCmd(io, nil),
		newMergeCmd(io, nil),
		newCompareCmd(io, nil),
		newReportCmd(io, nil),
		newQueryCmd(io, nil),
		newExportCmd(io, nil),
		newImportCmd(io, nil),
		newFitCmd(io, nil),
		newCalibrateCmd(io, nil),
		newScenariosCmd(io),
		newValidateCmd(io, nil),
		newSchemaCmd(io),
	)
	return root
}

// flagError names the subcommand once: exitCode already prints the "mayday:" prefix, so
// `mayday run --bad` says "mayday: run: unknown flag: --bad (see 'mayday run --help')". An
// unknown flag close to one the command has gets it suggested, as an unknown command does:
// `mayday run --sed 3` says "...; did you mean --seed?".
func flagError(c *cobra.Command, err error) error {
	hint := ""
	if s := suggestFlag(c, err); s != "" {
		hint = "; did you mean " + s + "?"
	}
	if !c.HasParent() {
		return badInputf("%w (see '%s --help')%s", err, c.CommandPath(), hint)
	}
	name := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
	return badInputf("%s: %w (see '%s --help')%s", name, err, c.CommandPath(), hint)
}

// suggestFlag returns the flag of c closest to the unknown long flag err names ("--name"),
// when its edit distance is within the command's SuggestionsMinimumDistance (cobra's rule
// for commands, 2 by default) or the unknown name (3 letters or more) is a prefix of it; ""
// otherwise. Ties go to the first flag by name (VisitAll's order), so the suggestion does
// not depend on the order the flags were declared in.
func suggestFlag(c *cobra.Command, err error) string {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return ""
	}
	typed, _, _ := strings.Cut(strings.TrimPrefix(msg, prefix), "=")
	if typed == "" {
		return ""
	}
	limit := c.SuggestionsMinimumDistance
	if limit <= 0 {
		limit = 2
	}
	best, bestD := "", limit+1
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := scenarios.EditDistance(strings.ToLower(typed), f.Name)
		if len(typed) >= 3 && strings.HasPrefix(f.Name, typed) && d > limit {
			d = limit // a prefix such as --memo for --memory-limit is a near miss however short
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	c.Flags().VisitAll(visit) // local, persistent and inherited flags, sorted by name
	if best == "" {
		return ""
	}
	return "--" + best
}

// runRoot executes the command line. An error cobra returns before a command's RunE ran
// (an unknown command or flag, a wrong number of arguments) is a usage error, so bad input;
// what a command returns keeps its own mark.
func runRoot(ctx context.Context, root *cobra.Command) error {
	if err := errors.Join(analysis.CheckMemoryEnv(), analysis.CheckThreadsEnv()); err != nil {
		return badInput(err)
	}
	ran := false
	markRan(root, &ran)
	err := root.ExecuteContext(ctx)
	if err != nil && !ran {
		return badInput(err)
	}
	return err
}

func markRan(c *cobra.Command, ran *bool) {
	if run := c.RunE; run != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
			*ran = true
			return run(c, args)
		}
	}
	for _, sub := range c.Commands() {
		markRan(sub, ran)
	}
}

func newVersionCmd(io *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mayday's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(io.Out, "mayday %s\n", version)
			return err
		},
	}
}
