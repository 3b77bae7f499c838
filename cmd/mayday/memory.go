//go:build duckdb_arrow

package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/pipeline"
)

// parseBytes reads a size such as 512MB, 4GiB or 1000000 (bytes).
func parseBytes(s string) (uint64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*mult > 1<<62 {
		return 0, badInputf("--memory-limit %q: want a size such as 512MB or 4GiB", s)
	}
	return uint64(v * mult), nil
}

// memoryStopped is MemoryWatch.Stopped as the command's error (exit 3): mayday stopped the
// runs, not the input.
func memoryStopped(ctx context.Context, mw *pipeline.MemoryWatch, stored string) error {
	if err := mw.Stopped(ctx, stored); err != nil {
		return internal(err)
	}
	return nil
}

// addMemoryFlag adds --memory-limit to a command that simulates.
func addMemoryFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "memory-limit", "", "stop cleanly (exit 3, runs kept as 'partial') when the process's memory passes this size, e.g. 8GiB (default: 90% of the machine's or container's memory)")
}

func memoryLimit(flag string) (uint64, error) {
	if flag == "" {
		return 0, nil
	}
	return parseBytes(flag)
}
