package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
)

// Shell completion: cobra's built-in `mayday completion bash|zsh|fish|powershell` prints the
// script; these functions supply the candidates. Scenario arguments complete to the embedded
// example names and to .yaml files; run arguments to folders and .duckdb files.

// completeScenarios completes a scenario argument: embedded names, then .yaml/.yml files and
// folders (to descend into) under what has been typed.
func completeScenarios(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	if !strings.ContainsAny(toComplete, `/\`) {
		for _, info := range scenarios.List() {
			if strings.HasPrefix(info.Name, toComplete) {
				out = append(out, info.Name+"\t"+info.Description)
			}
		}
	}
	files, dirs := listPath(toComplete, func(name string) bool {
		ext := strings.ToLower(filepath.Ext(name))
		return ext == ".yaml" || ext == ".yml"
	})
	return completionResult(append(out, files...), dirs)
}

// completeRunDirs completes a run argument: folders (run folders, sweep folders) and
// .duckdb files.
func completeRunDirs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	files, dirs := listPath(toComplete, func(name string) bool { return strings.HasSuffix(name, ".duckdb") })
	return completionResult(files, dirs)
}

// completeMetrics completes a comma-separated list of metric names.
func completeMetrics(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	chosen := strings.Split(done, ",")
	var out []string
	for _, name := range analysis.MetricNames {
		if strings.HasPrefix(name, last) && !slices.Contains(chosen, name) {
			out = append(out, done+name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completionResult adds folders with a trailing slash. When there are folders, no space
// follows a completion, so that completing a folder lets the user keep typing inside it.
func completionResult(items, dirs []string) ([]string, cobra.ShellCompDirective) {
	dir := cobra.ShellCompDirectiveNoFileComp
	if len(dirs) > 0 {
		dir |= cobra.ShellCompDirectiveNoSpace
	}
	return append(items, dirs...), dir
}

// listPath lists the entries of the folder of prefix that start with its last element:
// files that keep accepts, and folders (with a trailing separator). Hidden entries appear
// only when the prefix asks for them.
func listPath(prefix string, keep func(name string) bool) (files, dirs []string) {
	dir, base := filepath.Split(prefix)
	read := dir
	if read == "" {
		read = "."
	}
	entries, err := os.ReadDir(read)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(read, name)); err == nil {
				isDir = st.IsDir()
			}
		}
		switch {
		case isDir:
			dirs = append(dirs, dir+name+string(filepath.Separator))
		case keep(name):
			files = append(files, dir+name)
		}
	}
	return files, dirs
}
