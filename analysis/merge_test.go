//go:build duckdb_arrow

package analysis

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// Merge refuses a run it already holds, before copying anything; a table of the source that
// the target lacks (sweep_params) is created.
func TestMerge(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)[:2]
	dir := t.TempDir()
	src := filepath.Join(dir, "src.duckdb")
	db, err := Create(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if _, err := Execute(ctx, db, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteSweepParams(ctx, db, []SweepParam{{specs[0].RunID, 0, "recovery.retry.max_attempts", "1"}, {specs[1].RunID, 0, "recovery.retry.max_attempts", "1"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	dst, err := Create(filepath.Join(dir, "dst.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	ids, err := Merge(ctx, dst, []string{src})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{specs[0].RunID, specs[1].RunID}) {
		t.Errorf("merged %v", ids)
	}
	runs, err := ListRuns(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Point != 0 || len(runs[0].Params) != 1 {
		t.Errorf("runs after merge: %+v; want 2 runs at point 0 with their parameter", runs)
	}
	if _, err := Merge(ctx, dst, []string{src}); !errors.Is(err, ErrDuplicateRun) {
		t.Errorf("second merge of the same runs: %v; want ErrDuplicateRun", err)
	}
	if runs2, _ := ListRuns(ctx, dst); len(runs2) != 2 {
		t.Errorf("a refused merge changed the target: %d runs", len(runs2))
	}
}
