//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
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
// `mayday run --bad` says "mayday: run: unknown flag: --bad (see 'mayday run --help')".
func flagError(c *cobra.Command, err error) error {
	if !c.HasParent() {
		return badInputf("%w (see '%s --help')", err, c.CommandPath())
	}
	name := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
	return badInputf("%s: %w (see '%s --help')", name, err, c.CommandPath())
}

// runRoot executes the command line. An error cobra returns before a command's RunE ran
// (an unknown command or flag, a wrong number of arguments) is a usage error, so bad input;
// what a command returns keeps its own mark.
func runRoot(ctx context.Context, root *cobra.Command) error {
	if err := analysis.CheckMemoryEnv(); err != nil {
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
