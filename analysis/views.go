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

// CreateViews defines (or redefines) every view of the database: metrics (the stored rows),
// tool_stats and the views they read. It is idempotent and needs the trace tables to exist.
func (db *DB) CreateViews(ctx context.Context) error {
	if err := db.waitViews(); err != nil {
		return err
	}
	return db.createViews(ctx)
}

// createViews is CreateViews without waiting for the views Create defines. The metrics view
// reads the stored rows (run_metrics, see stored_metrics.go). A handle opened for one
// statement (Limits.Statement) defines only the views it reads (neededViews).
func (db *DB) createViews(ctx context.Context) error {
	if !db.readOnly {
		// The metrics view reads run_metrics: the stored tables come first.
		if err := db.prepareDerived(ctx); err != nil {
			return err
		}
	}
	files := viewSQL()
	need := neededViews(files, db.limits.Statement)
	// One transaction for every view: each committed on its own synced the write-ahead log
	// once.
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	for _, f := range files {
		q := f.sql
		if need != nil && !need[f.view] {
			q = unprepared(f)
		}
		if _, err := conn.ExecContext(ctx, q); err != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
			return fmt.Errorf("analysis: creating view %s (%s): %w", f.view, f.name, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("analysis: creating the views: %w", err)
	}
	// A writer stores the metrics rows and derived tables its runs lack (a reader computes
	// them in its private catalog: readerDerived).
	return db.prepareStored(ctx)
}

// neededViews returns the views that statement reads, directly or through another, among
// those files define: every view whose name it holds as a word (a mention in a comment or
// a string counts too, which costs only time), and the views those read. nil (every view)
// when statement is "".
func neededViews(files []viewFile, statement string) map[string]bool {
	if statement == "" {
		return nil
	}
	statement = strings.ToLower(statement)
	need := map[string]bool{}
	for _, f := range files {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(f.view) + `\b`).MatchString(statement) {
			need[f.view] = true
		}
	}
	for j := len(files) - 1; j >= 0; j-- {
		f := files[j]
		if !need[f.view] {
			continue
		}
		bare := strings.ToLower(sqlComment.ReplaceAllString(f.sql, ""))
		for _, g := range files[:j] {
			if reads(bare, g.view) {
				need[g.view] = true
			}
		}
	}
	return need
}

// unprepared is what a handle opened for one statement defines in place of a view the
// statement does not read: the file's macros (the simulated clock), which a reader always
// has, and a view of the same name that fails when read, so that neither the file's own
// view of that name nor an empty answer stands in for it (a filter that raises the error,
// which no count can skip).
func unprepared(f viewFile) string {
	var b strings.Builder
	for _, m := range macroStatement.FindAllString(f.sql, -1) {
		b.WriteString(m + "\n")
	}
	msg := "the view " + f.view + " is not defined on this handle: it was opened for a statement that does not name it"
	b.WriteString("CREATE OR REPLACE VIEW " + f.view + " AS SELECT NULL AS refused FROM range(1) WHERE error(" + literal(msg) + ");")
	return b.String()
}

var macroStatement = regexp.MustCompile(`(?m)^CREATE OR REPLACE MACRO [^;]*;`)

// reads tells whether a view file's SQL, without its comments and in lower case (bare),
// reads view (after FROM or JOIN). Most views are not named in most files, so a plain search
// rules them out before a regular expression is compiled.
func reads(bare, view string) bool {
	view = strings.ToLower(view)
	if !strings.Contains(bare, view) {
		return false
	}
	return regexp.MustCompile(`\b(from|join)\s+` + regexp.QuoteMeta(view) + `\b`).MatchString(bare)
}

var sqlComment = regexp.MustCompile(`--[^\n]*`)
