package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

func init() { subcommands = append(subcommands, newScenariosCmd, newValidateCmd) }

func newScenariosCmd(io *ioStreams) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "scenarios",
		Short: "List the embedded example scenarios",
		Long:  "List the example scenarios built into mayday; each runs by name from any folder.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			list := scenarios.List()
			if format == "json" {
				return reports.WriteJSON(io.Out, list)
			}
			tw := tabwriter.NewWriter(io.Out, 0, 0, 2, ' ', 0)
			for _, info := range list {
				name := info.Name
				if name == scenarios.Default {
					name += " (default)"
				}
				fmt.Fprintf(tw, "%s\t%s\n", name, info.Description)
			}
			return tw.Flush()
		},
	}
	addFormatFlag(cmd, &format)
	return cmd
}

// validation is one scenario's verdict, as `mayday validate --format json` prints it.
type validation struct {
	Ref            string `json:"ref"`
	Name           string `json:"name,omitempty"`
	OK             bool   `json:"ok"`
	Error          string `json:"error,omitempty"`
	Investigations int    `json:"investigations,omitempty"`
	Tools          int    `json:"tools,omitempty"`
	Faults         int    `json:"faults,omitempty"`
}

func newValidateCmd(io *ioStreams) *cobra.Command {
	var (
		sets   []string
		format string
		quiet  bool
	)
	cmd := &cobra.Command{
		Use:   "validate SCENARIO...",
		Short: "Check scenario files without running them",
		Long: `Parse and check each scenario (a YAML file or an embedded name): unknown keys, wrong types,
impossible values and dangling tool references are reported with file, line and key.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			var out []validation
			bad := 0
			for _, ref := range args {
				v := validation{Ref: ref}
				s, err := scenarios.Load(ref, sets)
				if err != nil {
					bad++
					v.Error = err.Error()
					if format == "text" {
						fmt.Fprintln(io.ErrOut, err)
					}
				} else {
					v.OK, v.Name = true, s.Name
					v.Investigations, v.Tools, v.Faults = s.Workload.Investigations, len(s.Tools), len(s.Faults)
					if format == "text" && !quiet {
						fmt.Fprintf(io.Out, "ok  %s (%s: %d investigations, %d tools, %d faults)\n",
							ref, s.Name, v.Investigations, v.Tools, v.Faults)
					}
				}
				out = append(out, v)
			}
			if format == "json" && !quiet {
				if err := reports.WriteJSON(io.Out, out); err != nil {
					return err
				}
			}
			if bad > 0 {
				return errors.New(plural(bad, "scenario is", "scenarios are") + " invalid")
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a value before checking: path=value (repeatable)")
	addFormatFlag(cmd, &format)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only errors")
	return cmd
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
