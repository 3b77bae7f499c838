//go:build duckdb_arrow

package analysis

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

// The views are the definitions of mayday's metrics (docs/metrics.md and docs/traces.md). Each file
// holds one CREATE OR REPLACE VIEW, with the interpretation it implements in its leading
// comment; files run in name order, so a view comes after the views it reads.
//
//go:embed views/*.sql
var viewFiles embed.FS

// Views lists the views CreateViews defines, in creation order.
var Views = func() []string {
	var names []string
	for _, f := range viewSQL() {
		names = append(names, f.view)
	}
	return names
}()

// macros lists the SQL macros the view files define (the simulated clock: sim_epoch,
// sim_minute, ...), which a database mayday wrote stores beside its views.
var macros = func() []string {
	var names []string
	for _, f := range viewSQL() {
		for _, m := range createMacro.FindAllStringSubmatch(f.sql, -1) {
			names = append(names, m[1])
		}
	}
	return names
}()

var createMacro = regexp.MustCompile(`(?m)^CREATE OR REPLACE MACRO (\w+)\(`)

type viewFile struct {
	name, view, sql string
}

// viewSQL returns the embedded view files in name order.
func viewSQL() []viewFile {
	entries, err := fs.Glob(viewFiles, "views/*.sql")
	if err != nil {
		panic(err)
	}
	slices.Sort(entries)
	files := make([]viewFile, 0, len(entries))
	for _, name := range entries {
		b, err := viewFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		files = append(files, viewFile{name: name, view: viewName(string(b)), sql: string(b)})
	}
	return files
}

// viewName finds the view a file defines, for error messages and Views.
func viewName(sql string) string {
	const marker = "CREATE OR REPLACE VIEW "
	i := strings.Index(sql, marker)
	if i < 0 {
		panic("analysis: an embedded view file does not CREATE OR REPLACE VIEW")
	}
	name, _, _ := strings.Cut(sql[i+len(marker):], " ")
	return name
}

// CreateViews defines (or redefines) every view of the database: metrics, incidents,
// recovery_episodes, tool_stats and the helper views they read. It is idempotent and needs
// the trace tables to exist; a database opened read-only already holds its views.
func (db *DB) CreateViews(ctx context.Context) error {
	for _, f := range viewSQL() {
		if _, err := db.SQL().ExecContext(ctx, f.sql); err != nil {
			return fmt.Errorf("analysis: creating view %s (%s): %w", f.view, f.name, err)
		}
	}
	return nil
}
