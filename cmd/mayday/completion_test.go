//go:build duckdb_arrow

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestCompleteScenarios(t *testing.T) {
	got, dir := completeScenarios(nil, nil, "testdata/re")
	if !slices.Contains(got, "testdata/retried.yaml") || dir&cobra.ShellCompDirectiveNoFileComp == 0 {
		t.Errorf("testdata/re: %v (directive %v); want testdata/retried.yaml and no default file completion", got, dir)
	}
	got, _ = completeScenarios(nil, nil, "test")
	if !slices.Contains(got, "testdata/") {
		t.Errorf("test: %v; want the folder testdata/ to descend into", got)
	}
	got, _ = completeScenarios(nil, nil, "")
	embedded := 0
	for _, c := range got {
		if strings.Contains(c, "\t") { // embedded names carry their description
			embedded++
		}
	}
	if embedded == 0 {
		t.Errorf("no embedded scenario offered: %v", got)
	}
	for _, c := range got {
		if strings.HasSuffix(c, ".go") {
			t.Errorf("completion offers a Go file: %q", c)
		}
	}
}

func TestCompleteMetrics(t *testing.T) {
	got, _ := completeMetrics(nil, nil, "completion_rate,retry")
	if !slices.Equal(got, []string{"completion_rate,retry_amplification"}) {
		t.Errorf("completion_rate,retry: %v", got)
	}
	got, _ = completeMetrics(nil, nil, "completion_rate,c")
	if slices.Contains(got, "completion_rate,completion_rate") || !slices.Contains(got, "completion_rate,correct_completion_rate") {
		t.Errorf("completion_rate,c: %v; want the others, not the one already chosen", got)
	}
}

// Cobra's completion command is present and its scripts generate.
func TestCompletionCommand(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errOut, code := execMayday(t, "completion", shell)
		if code != 0 || len(out) < 100 {
			t.Errorf("completion %s: exit %d, %d bytes, %s", shell, code, len(out), errOut)
		}
	}
	out, _, _ := execMayday(t, cobra.ShellCompRequestCmd, "check", "testdata/no")
	if !strings.Contains(out, "testdata/no-retry.yaml") {
		t.Errorf("__complete check testdata/no: %q", out)
	}
}
