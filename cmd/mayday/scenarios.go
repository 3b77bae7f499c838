package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/scenarios"
)

func init() { subcommands = append(subcommands, newScenariosCmd, newValidateCmd) }

func newScenariosCmd(io *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "scenarios",
		Short: "List the embedded example scenarios",
		Long:  "List the example scenarios built into mayday; each runs by name from any folder.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(io.Out, 0, 0, 2, ' ', 0)
			for _, info := range scenarios.List() {
				name := info.Name
				if name == scenarios.Default {
					name += " (default)"
				}
				fmt.Fprintf(tw, "%s\t%s\n", name, info.Description)
			}
			return tw.Flush()
		},
	}
}

func newValidateCmd(io *ioStreams) *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "validate SCENARIO...",
		Short: "Check scenario files without running them",
		Long: `Parse and check each scenario (a YAML file or an embedded name): unknown keys, wrong types,
impossible values and dangling tool references are reported with file, line and key.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(_ *cobra.Command, args []string) error {
			bad := 0
			for _, ref := range args {
				s, err := scenarios.Load(ref, sets)
				if err != nil {
					bad++
					fmt.Fprintln(io.ErrOut, err)
					continue
				}
				fmt.Fprintf(io.Out, "ok  %s (%s: %d investigations, %d tools, %d faults)\n",
					ref, s.Name, s.Workload.Investigations, len(s.Tools), len(s.Faults))
			}
			if bad > 0 {
				return errors.New(plural(bad, "scenario is", "scenarios are") + " invalid")
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a value before checking: path=value (repeatable)")
	return cmd
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
