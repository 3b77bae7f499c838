package mayday_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dockerignore is the build context's rules: each pattern, and whether it re-includes (!).
type dockerignore []struct {
	re      *regexp.Regexp
	include bool
}

// readDockerignore reads the patterns as Docker does: one a line, # comments, later lines
// winning, * and ? within a path segment, ** across segments, a pattern naming a folder
// naming everything in it.
func readDockerignore(t *testing.T) dockerignore {
	t.Helper()
	f, err := os.Open(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d dockerignore
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		include := strings.HasPrefix(line, "!")
		pat := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(line, "!")))
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(pat); i++ {
			switch c := pat[i]; {
			case strings.HasPrefix(pat[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(pat[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		d = append(d, struct {
			re      *regexp.Regexp
			include bool
		}{regexp.MustCompile(re.String()), include})
	}
	return d
}

// excluded reports whether path (slash-separated, relative to the context) stays out of the
// build context: the last pattern matching it or a folder above it decides.
func (d dockerignore) excluded(path string) bool {
	out := false
	for _, p := range d {
		for q := path; q != "." && q != "/" && q != ""; q = filepath.ToSlash(filepath.Dir(q)) {
			if p.re.MatchString(q) {
				out = !p.include
				break
			}
		}
	}
	return out
}

// The image's build context holds every file `go build ./cmd/mayday` reads (the module
// files, the Go sources of every package it links, the files they embed) and nothing it
// does not: no tests, test data, docs or .git.
func TestDockerBuildContext(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	d := readDockerignore(t)
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "-tags", "duckdb_arrow", "-f",
		`{{.Dir}}|{{join .GoFiles ","}},{{join .CgoFiles ","}},{{join .EmbedFiles ","}},{{join .HFiles ","}},{{join .CFiles ","}}`,
		"./cmd/mayday").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	needed := map[string]bool{"go.mod": true, "go.sum": true}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, files, _ := strings.Cut(line, "|")
		rel, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // the standard library, the module cache
		}
		for _, f := range strings.Split(files, ",") {
			if f != "" {
				needed[filepath.ToSlash(filepath.Join(rel, f))] = true
			}
		}
	}
	if len(needed) < 50 {
		t.Fatalf("go list found %d files; the module's packages are missing", len(needed))
	}
	for f := range needed {
		if d.excluded(f) {
			t.Errorf(".dockerignore leaves out %s, which the build reads", f)
		}
	}
	err = filepath.WalkDir(".", func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		path = filepath.ToSlash(path)
		if e.IsDir() && (path == "bin" || path == "runs" || path == ".git") {
			if !d.excluded(path + "/x") {
				t.Errorf(".dockerignore lets %s/ into the build context", path)
			}
			return filepath.SkipDir
		}
		if e.IsDir() || needed[path] || d.excluded(path) {
			return nil
		}
		// Included without being read: only the sources of packages mayday does not link.
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata/") {
			t.Errorf(".dockerignore lets %s into the build context, which the build does not read", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !d.excluded(".git") {
		t.Error(".dockerignore lets .git into the build context")
	}
}

// Every base image is pinned by digest, its tag beside it for the reader.
func TestDockerfilePinsBaseImages(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	pinned := regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)
	froms := 0
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == "ARG" {
			if name, val, ok := strings.Cut(fields[1], "="); ok {
				args[name] = val
			}
		}
		if len(fields) < 2 || fields[0] != "FROM" {
			continue
		}
		froms++
		ref := fields[1]
		if strings.HasPrefix(ref, "${") {
			ref = args[strings.Trim(ref, "${}")]
		}
		if !pinned.MatchString(ref) {
			t.Errorf("Dockerfile: %q is not pinned as tag@sha256:digest", line)
		}
	}
	if froms < 2 {
		t.Errorf("Dockerfile: %d FROM lines, want the build and the runtime stage", froms)
	}
}
