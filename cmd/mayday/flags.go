//go:build duckdb_arrow

package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/scenarios"
)

// runFlags are the flags run, check and sweep share, declared and checked here once: a new
// shared flag is a field, a line in add and, if it can be wrong, a line in check.
type runFlags struct {
	Seed     uint64
	SeedSet  bool // --seed was given: it replaces each scenario's own seed
	Seeds    int
	Sets     []string
	Out      string
	Force    bool
	Format   string
	Quiet    bool
	MemLimit string
}

// runFlagText is what differs between the commands: help texts and the default of --seeds.
type runFlagText struct {
	Seed, Seeds, Set, Out, Force, Quiet string
	SeedsDefault                        int
}

func (o *runFlags) add(cmd *cobra.Command, t runFlagText) {
	f := cmd.Flags()
	f.Uint64Var(&o.Seed, "seed", 0, t.Seed)
	f.IntVar(&o.Seeds, "seeds", t.SeedsDefault, t.Seeds)
	f.StringArrayVar(&o.Sets, "set", nil, t.Set)
	f.StringVarP(&o.Out, "out", "o", "", t.Out)
	f.BoolVar(&o.Force, "force", false, t.Force)
	addFormatFlag(cmd, &o.Format)
	f.BoolVarP(&o.Quiet, "quiet", "q", false, t.Quiet)
	addMemoryFlag(cmd, &o.MemLimit)
}

// parsed records what only the parsed command line knows: whether --seed was given.
func (o *runFlags) parsed(c *cobra.Command) { o.SeedSet = c.Flags().Changed("seed") }

// check refuses impossible values of the shared flags (--memory-limit is read by
// memoryLimit where it is used).
func (o *runFlags) check() error {
	if o.Seeds < 1 {
		return badInputf("--seeds %d: want 1 or more", o.Seeds)
	}
	if err := checkOut(o.Out); err != nil {
		return err
	}
	return checkFormat(o.Format)
}

// seedOf is the first seed of s: --seed when given, else the scenario's own.
func (o *runFlags) seedOf(s *scenarios.Scenario) uint64 {
	if o.SeedSet {
		return o.Seed
	}
	return s.Seed
}

func addFormatFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "format", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
}

func checkFormat(f string) error {
	if f != "text" && f != "json" {
		return badInputf("--format %q: want text or json", f)
	}
	return nil
}

// formatWords are output formats a user may type after -o out of habit (kubectl's -o json).
var formatWords = map[string]bool{"json": true, "yaml": true, "yml": true, "text": true, "txt": true,
	"csv": true, "wide": true, "table": true, "html": true, "md": true, "markdown": true}

// checkOut refuses an --out that is a format's name and not a path (`-o json`): it would
// silently create a folder named json. A folder of that name is still written when the
// value says it is a path (./json).
func checkOut(out string) error {
	if formatWords[strings.ToLower(out)] {
		return badInputf("-o/--out %q names the folder to write, not an output format: for %s output use --format %s (json or text); "+
			"to write a folder named %s, give --out ./%s", out, out, strings.ToLower(out), out, out)
	}
	return nil
}
