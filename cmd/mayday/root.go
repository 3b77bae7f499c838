package main

import (
	"fmt"

	"github.com/spf13/cobra"
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%s: %w (see '%s --help')", c.CommandPath(), err, c.CommandPath())
	})
	root.AddCommand(newVersionCmd(io))
	for _, add := range subcommands {
		root.AddCommand(add(io))
	}
	return root
}

// subcommands is filled by each command's file, so adding a command touches one file only.
var subcommands []func(*ioStreams) *cobra.Command

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
