package mayday_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The layering of docs/architecture.md is the imports of the code, exactly: every package of
// the module is in the doc's table, and the doc names exactly the mayday packages it imports
// (test files and testdata aside), so a new arrow fails here until the doc draws it, and so
// does an arrow the doc keeps after the code dropped it.

const module = "github.com/mayday-sim/mayday/"

func TestArchitectureDocMatchesImports(t *testing.T) {
	doc := layeringTable(t, "docs/architecture.md")
	code := moduleImports(t)
	for pkg, imports := range code {
		want, ok := doc[pkg]
		if !ok {
			t.Errorf("package %s (imports %v) is not in the layering table of docs/architecture.md", pkg, imports)
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(want, imp) {
				t.Errorf("%s imports %s, which the layering of docs/architecture.md does not allow", pkg, imp)
			}
		}
		for _, imp := range want {
			if !slices.Contains(imports, imp) {
				t.Errorf("docs/architecture.md says %s imports %s, but it does not: drop the arrow from the doc", pkg, imp)
			}
		}
	}
	for pkg := range doc {
		if _, ok := code[pkg]; !ok {
			t.Errorf("docs/architecture.md lists package %s, which does not exist", pkg)
		}
	}
}

// Only traces and analysis link Arrow, and only analysis and cmd/mayday link DuckDB (as
// docs/architecture.md says), so the other packages' tests stay fast and run under -race.
func TestHeavyImportsStayPut(t *testing.T) {
	for _, rule := range []struct {
		prefix, what string
		allowed      []string
	}{
		{"github.com/apache/arrow-go/", "Arrow", []string{"traces", "analysis"}},
		{"github.com/duckdb/duckdb-go/", "DuckDB", []string{"analysis", "cmd/mayday"}},
	} {
		for pkg, imports := range allImports(t) {
			for _, imp := range imports {
				if strings.HasPrefix(imp, rule.prefix) && !slices.Contains(rule.allowed, pkg) {
					t.Errorf("%s imports %s: only %v may link %s", pkg, imp, rule.allowed, rule.what)
				}
			}
		}
	}
}

// No function outside tests is longer than 100 lines, from `func` to its closing brace.
func TestNoLongFunctions(t *testing.T) {
	const limit = 100
	fset := token.NewFileSet()
	for _, path := range goFiles(t) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > limit {
				t.Errorf("%s:%d: %s is %d lines; split it (at most %d)", path, start.Line, fd.Name.Name, n, limit)
			}
		}
	}
}

// goFiles lists the module's Go files that are not tests, outside testdata and hidden folders.
func goFiles(t *testing.T) []string {
	t.Helper()
	return goFilesWith(t, false)
}

// goFilesWith is goFiles, with the tests too when tests is true.
func goFilesWith(t *testing.T, tests bool) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || name == "bin" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && (tests || !strings.HasSuffix(name, "_test.go")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// allImports maps each package folder of the module (e.g. "sim/record") to the import paths
// of its files that are not tests, whatever their build tags.
func allImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, path := range goFiles(t) {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if _, ok := out[pkg]; !ok {
			out[pkg] = []string{}
		}
		for _, s := range f.Imports {
			imp, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(out[pkg], imp) {
				out[pkg] = append(out[pkg], imp)
			}
		}
	}
	return out
}

// moduleImports is allImports restricted to the module's own packages.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for pkg, imports := range allImports(t) {
		out[pkg] = []string{}
		for _, imp := range imports {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				out[pkg] = append(out[pkg], rest)
			}
		}
	}
	return out
}

// layeringTable reads the doc's table whose header is `| package | imports |`: per row a
// package in backquotes and the packages it imports, in backquotes, or — for none.
func layeringTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		cells := strings.Split(strings.Trim(strings.TrimSpace(sc.Text()), "|"), "|")
		if len(cells) < 2 || !strings.HasPrefix(strings.TrimSpace(sc.Text()), "|") {
			if in {
				break
			}
			continue
		}
		first, second := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])
		switch {
		case first == "package" && second == "imports":
			in = true
		case !in || strings.HasPrefix(first, "---"):
		default:
			pkg := strings.Trim(first, "`")
			if _, dup := out[pkg]; dup {
				t.Errorf("%s:%d: package %s is listed twice", path, line, pkg)
			}
			out[pkg] = []string{}
			if second == "—" {
				continue
			}
			for _, imp := range strings.Split(second, ",") {
				imp = strings.TrimSpace(imp)
				if !strings.HasPrefix(imp, "`") || !strings.HasSuffix(imp, "`") {
					t.Errorf("%s:%d: %q: want imports as `package`, comma-separated, or —", path, line, imp)
				}
				out[pkg] = append(out[pkg], strings.Trim(imp, "`"))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no table with the header | package | imports |", path)
	}
	return out
}

// Every package make test runs without DuckDB that starts goroutines (a go statement, a
// WaitGroup's or errgroup's Go, or t.Parallel, in its code or its tests) is in the
// Makefile's RACE, so the race detector watches wherever two goroutines can meet; the other
// packages are tested without it.
func TestRaceCoversConcurrentPackages(t *testing.T) {
	pure, race := makeList(t, "PURE"), makeList(t, "RACE")
	concurrent := map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range goFilesWith(t, true) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				concurrent[pkg] = true
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Parallel" && len(x.Args) == 0 || sel.Sel.Name == "Go" && len(x.Args) == 1) {
					concurrent[pkg] = true
				}
			}
			return true
		})
	}
	if !concurrent["sim/record"] {
		t.Fatal("sim/record hashes on a goroutine of its own, and the scan did not find it")
	}
	for pkg := range concurrent {
		if covers(pure, pkg) && !covers(race, pkg) {
			t.Errorf("%s starts goroutines and is tested without DuckDB: add it to RACE in the Makefile", pkg)
		}
	}
}

// makeList reads the Makefile's variable name (`NAME := a b ...` on one line).
func makeList(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":="); ok && strings.TrimSpace(k) == name {
			return strings.Fields(v)
		}
	}
	t.Fatalf("the Makefile sets no %s", name)
	return nil
}

// covers reports whether one of go test's package patterns (".", "./x", "./x/...") names the
// package folder pkg ("." for the module's root).
func covers(patterns []string, pkg string) bool {
	for _, p := range patterns {
		p = strings.TrimPrefix(p, "./")
		if rest, ok := strings.CutSuffix(p, "/..."); ok {
			if pkg == rest || strings.HasPrefix(pkg, rest+"/") {
				return true
			}
		} else if pkg == p {
			return true
		}
	}
	return false
}
