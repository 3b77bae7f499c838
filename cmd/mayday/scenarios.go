package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

func newScenariosCmd(io *ioStreams) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "scenarios",
		Short: "List the embedded example scenarios",
		Long: `List the example scenarios built into mayday; each runs by name from any folder.
'mayday scenarios show NAME' prints one, ready to save and edit as a starting file.`,
		Example: `  mayday scenarios
  mayday scenarios show research-fleet > my-fleet.yaml   # a starting file to edit
  mayday validate my-fleet.yaml && mayday run my-fleet.yaml`,
		Args: cobra.NoArgs,
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
	cmd.AddCommand(newScenariosShowCmd(io))
	return cmd
}

// newScenariosShowCmd prints an embedded example's file exactly as it is embedded, so that
// `mayday scenarios show NAME > my.yaml` is a valid scenario to edit.
func newScenariosShowCmd(io *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:               "show NAME",
		Short:             "Print an embedded example scenario, ready to save and edit",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(_ *cobra.Command, args []string) error {
			data, ok := scenarios.Embedded(args[0])
			if !ok {
				var names []string
				for _, info := range scenarios.List() {
					names = append(names, info.Name)
				}
				return badInputf("scenarios show: no embedded example named %q; the examples are: %s",
					args[0], strings.Join(names, ", "))
			}
			_, err := io.Out.Write(data)
			return err
		},
	}
}

// problem is one thing wrong in a scenario, as `mayday validate --format json` prints it:
// one object per problem, placed for an editor or a CI annotation. Line and column are 0
// when the problem has no place in the file (a missing file, a bad --set value).
type problem struct {
	Ref        string `json:"ref"`  // the argument as given: a path or an embedded name
	File       string `json:"file"` // the file, or embedded:NAME
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Key        string `json:"key"` // dotted path, e.g. faults[2].for
	Message    string `json:"message"`
	Suggestion string `json:"suggestion"`         // the nearest valid key or word, if one is close
	Want       string `json:"want,omitempty"`     // what would be valid, when the message says
	Override   string `json:"override,omitempty"` // the --set or sweep value it came from
}

// problems lists what Load reported about ref, one entry per problem.
func problems(ref string, err error) []problem {
	var list scenarios.ErrorList
	var one *scenarios.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = scenarios.ErrorList{one}
	default:
		return []problem{{Ref: ref, File: ref, Message: err.Error()}}
	}
	out := make([]problem, len(list))
	for i, e := range list {
		out[i] = problem{Ref: ref, File: e.File, Line: e.Line, Column: e.Column, Key: e.Key,
			Message: e.Msg, Suggestion: e.Suggestion, Want: e.Want(), Override: e.Override}
	}
	return out
}

type validateOptions struct {
	io        *ioStreams
	Scenarios []string
	Sets      []string
	Format    string
	Quiet     bool
}

// newValidateCmd builds 'mayday validate'; runF, when not nil, gets the parsed options
// instead of running them.
func newValidateCmd(io *ioStreams, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{io: io}
	cmd := &cobra.Command{
		Use:   "validate SCENARIO...",
		Short: "Check scenario files without running them",
		Long: `Parse and check each scenario (a YAML file or an embedded name): unknown keys, wrong types,
impossible values and dangling tool references are reported with file, line and key.

--format json prints a JSON array with one object per problem (ref, file, line, column, key,
message, suggestion, want, override), an empty array when every scenario is valid, for
editors and CI annotations; the exit code is 2 when there is any problem.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Scenarios = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Sets, "set", nil, "override a value before checking: path=value (repeatable)")
	addFormatFlag(cmd, &opts.Format)
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print only errors")
	return cmd
}

func validateRun(opts *validateOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	io := opts.io
	found := []problem{}
	bad := 0
	for _, ref := range opts.Scenarios {
		s, err := scenarios.Load(ref, opts.Sets)
		switch {
		case err != nil:
			bad++
			found = append(found, problems(ref, err)...)
			if opts.Format == "text" {
				fmt.Fprintln(io.ErrOut, err)
			}
		case opts.Format == "text" && !opts.Quiet:
			fmt.Fprintf(io.Out, "ok  %s (%s: %d investigations, %d tools, %d faults)\n",
				ref, s.Name, s.Workload.Investigations, len(s.Tools), len(s.Faults))
		}
	}
	if opts.Format == "json" {
		if err := reports.WriteJSON(io.Out, found); err != nil {
			return err
		}
	}
	if bad > 0 {
		return badInputf("%s invalid", plural(bad, "scenario is", "scenarios are"))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
