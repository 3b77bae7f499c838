//go:build duckdb_arrow

package analysis

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Merge refuses a run it already holds, before copying anything; a table of the source that
// the target lacks (sweep_params) is created.
func TestMerge(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)[:2]
	dir := t.TempDir()
	src := filepath.Join(dir, "src.duckdb")
	runsInto(t, src, specs, func(db *DB) error {
		return WriteSweepParams(ctx, db, []SweepParam{{specs[0].RunID, 0, "recovery.retry.max_attempts", "1"}, {specs[1].RunID, 0, "recovery.retry.max_attempts", "1"}})
	})
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

// Merge refuses, before copying anything, a source written with another trace layout: one
// whose spans still have the attrs map this version no longer stores.
func TestMergeRefusesAnotherLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "old.duckdb")
	runsInto(t, src, batchSpecs(t)[:1], func(db *DB) error {
		_, err := db.SQL().ExecContext(ctx, "ALTER TABLE spans ADD COLUMN attrs MAP(VARCHAR, VARCHAR)")
		return err
	})
	dst, err := Create(filepath.Join(dir, "dst.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	_, err = Merge(ctx, dst, []string{src})
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "spans has a column attrs") || !strings.Contains(err.Error(), src) {
		t.Fatalf("merging a database with spans.attrs: %v; want ErrLayout naming the file, the table and the column", err)
	}
	if runs, _ := ListRuns(ctx, dst); len(runs) != 0 {
		t.Errorf("a refused merge changed the target: %d runs", len(runs))
	}
}

// runsInto creates a database file at path, executes specs into it, then calls then on it
// (unless nil) and closes it.
func runsInto(t *testing.T, path string, specs []Spec, then func(*DB) error) {
	t.Helper()
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if _, err := Execute(context.Background(), db, s); err != nil {
			t.Fatal(err)
		}
	}
	if then != nil {
		if err := then(db); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
