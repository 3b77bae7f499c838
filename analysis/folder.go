package analysis

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// DBFile and SummaryFile are the names of a run folder's two files; SweepFile is the table a
// sweep folder adds.
const (
	DBFile      = "mayday.duckdb"
	SummaryFile = "summary.json"
	SweepFile   = "sweep.json"
)

// ErrExists reports a run folder that already exists (use --force to replace it).
var ErrExists = errors.New("already exists")

// ErrNotRunFolder reports a path that --force will not replace: it is not recognisably
// something mayday wrote.
var ErrNotRunFolder = errors.New("not a mayday run or sweep folder")

// Folder is a folder being written (a run, a sweep, a report). Everything goes into a hidden
// staging folder beside the target, named after the target and this process's id, which
// Commit renames into place, so a failed or interrupted command never leaves a half-written
// folder, and a forced run replaces the old one only once the new one is whole.
type Folder struct {
	Dir string // the final location
	// Replacing is true when Dir held a recognised folder when staging began.
	Replacing bool
	// Stale lists what was cleaned up from commands killed while writing the same place.
	Stale []string
	stage string
	force bool
	what  string
}

// NewFolder prepares to write the run or sweep folder dir. It refuses an existing dir
// unless force, and with force refuses anything IsRunFolder does not recognise.
func NewFolder(dir string, force bool) (*Folder, error) {
	return NewFolderOf(dir, force, "run folder", IsRunFolder)
}

// NewFolderOf is NewFolder for any kind of folder: recognise says whether an existing dir
// may be replaced (nil) or why not; what names the kind in messages.
func NewFolderOf(dir string, force bool, what string, recognise func(string) error) (*Folder, error) {
	if err := CheckOutPath(dir); err != nil {
		return nil, fmt.Errorf("%s %w", what, err)
	}
	f := &Folder{Dir: dir, force: force, what: what}
	if _, err := os.Lstat(dir); err == nil {
		if !force {
			return nil, fmt.Errorf("%s %s: %w; choose another --out or pass --force to replace it", what, dir, ErrExists)
		}
		if err := recognise(dir); err != nil {
			return nil, fmt.Errorf("%s %s: --force replaces only a folder mayday wrote, and %w; nothing was changed", what, dir, err)
		}
		if err := VerifyManifest(dir); err != nil {
			return nil, fmt.Errorf("%s %s: --force replaces only a folder mayday wrote, and %w; nothing was changed (move those files, or remove the folder yourself)", what, dir, err)
		}
		f.Replacing = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s %s: %w", what, dir, err)
	}
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, dir, err)
	}
	f.Stale = cleanStale(parent, "."+base+".tmp-", dir)
	f.stage = filepath.Join(parent, "."+base+".tmp-"+strconv.Itoa(os.Getpid()))
	_ = os.RemoveAll(f.stage)
	if err := os.Mkdir(f.stage, 0o755); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, dir, err)
	}
	return f, nil
}

// cleanStale removes the staging folders named prefix+PID of processes that no longer run
// (a command killed with SIGKILL cannot clean up after itself). A ".old" folder is the
// previous target parked by a Commit that was killed half-way: it is put back when the
// target is missing. It returns what it did, for the command to report.
func cleanStale(parent, prefix, dir string) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var done []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pidText, old := strings.CutSuffix(rest, ".old")
		pidText, _, _ = strings.Cut(pidText, "-") // a batch folder is named PID-random
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if old {
			if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) && os.Rename(p, dir) == nil {
				done = append(done, fmt.Sprintf("put back %s from %s, left by a command that was killed while replacing it", dir, p))
				continue
			}
		}
		if os.RemoveAll(p) == nil {
			done = append(done, fmt.Sprintf("removed %s, left by a command that was killed while writing %s", p, dir))
		}
	}
	return done
}

// alive reports whether process pid exists (signal 0 checks without sending anything).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// IsRunFolder says whether dir is a run or sweep folder mayday wrote: a folder holding a
// DuckDB database named DBFile and nothing but the files mayday puts there (summary.json,
// sweep.json, the database's WAL, a report/ folder, hidden staging folders of mayday).
func IsRunFolder(dir string) error {
	entries, err := readFolder(dir)
	if err != nil {
		return err
	}
	db := false
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == DBFile && e.Type().IsRegular():
			if err := isDuckDB(filepath.Join(dir, name)); err != nil {
				return err
			}
			db = true
		case (name == SummaryFile || name == SweepFile || name == DBFile+".wal" || name == FolderManifest) && e.Type().IsRegular():
		case name == "report" && e.IsDir():
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") && e.IsDir():
		default:
			return fmt.Errorf("it holds %s, which mayday does not write there", name)
		}
	}
	if !db {
		return fmt.Errorf("it holds no %s", DBFile)
	}
	return nil
}

func readFolder(dir string) ([]os.DirEntry, error) {
	st, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, errors.New("it is not a folder")
	}
	return os.ReadDir(dir)
}

// isDuckDB checks a DuckDB file's header: its magic bytes "DUCK" follow an 8-byte checksum.
func isDuckDB(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [12]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[8:12]) != "DUCK" {
		return fmt.Errorf("its %s is not a DuckDB database", filepath.Base(path))
	}
	return nil
}

// Path returns the path of a file inside the folder being written.
// A name that would leave the folder ("../x", "/x") is a bug: every identifier that becomes
// part of a name is checked before (CheckRunID), so it panics rather than write elsewhere.
func (f *Folder) Path(name string) string {
	if name != "" && !filepath.IsLocal(name) {
		panic(fmt.Sprintf("analysis: %q would leave the folder %s", name, f.Dir))
	}
	return filepath.Join(f.stage, name)
}

// DBPath is the path of the database inside the folder being written.
func (f *Folder) DBPath() string { return f.Path(DBFile) }

// Commit moves the finished folder into place, replacing an old one when forced.
func (f *Folder) Commit() error {
	if err := writeFolderManifest(f.stage, f.what); err != nil {
		return err
	}
	var old string
	if _, err := os.Lstat(f.Dir); err == nil {
		if !f.force {
			return fmt.Errorf("folder %s: %w", f.Dir, ErrExists)
		}
		old = f.stage + ".old"
		if err := os.Rename(f.Dir, old); err != nil {
			return fmt.Errorf("folder %s: %w", f.Dir, err)
		}
	}
	if err := os.Rename(f.stage, f.Dir); err != nil {
		if old != "" {
			_ = os.Rename(old, f.Dir)
		}
		return fmt.Errorf("folder %s: %w", f.Dir, err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// Abort removes everything written so far.
func (f *Folder) Abort() { _ = os.RemoveAll(f.stage) }

// StagePath is the file a command writes before renaming it to target: target+stage+PID.
func StagePath(target, stage string) string {
	return target + stage + strconv.Itoa(os.Getpid())
}

// CleanStaleFiles removes the staged files (and their write-ahead logs) of target left by
// processes that no longer run, named target+stage+PID as StagePath names them, and the
// names older versions used (target+".tmp-merge", with its ".wal"). It returns what it did.
func CleanStaleFiles(target, stage string) []string {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var done []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok || e.IsDir() {
			continue
		}
		rest = strings.TrimSuffix(rest, ".wal")
		var stale bool
		if pidText, ok := strings.CutPrefix(rest, stage); ok {
			pid, err := strconv.Atoi(pidText)
			stale = err == nil && pid > 0 && pid != os.Getpid() && !alive(pid)
		} else {
			stale = rest == ".tmp-merge" // an older version's name, without a PID
		}
		p := filepath.Join(dir, e.Name())
		if stale && os.Remove(p) == nil {
			done = append(done, fmt.Sprintf("removed %s, left by a command that was killed while writing %s", p, target))
		}
	}
	return done
}

// IsMaydayDB says whether path is a database mayday wrote (a DuckDB file with mayday's runs
// table, readable through Open), or why not.
func IsMaydayDB(path string) error {
	if err := isDuckDB(path); err != nil {
		return fmt.Errorf("%s is not a DuckDB database", filepath.Base(path))
	}
	db, err := Open(path)
	if err != nil {
		return fmt.Errorf("it is not a mayday database (%w)", err)
	}
	return db.Close()
}

// CheckOutPath refuses a path mayday cannot write a folder or database to: empty, one that
// names an existing folder by its relation (".", "..", "/"), or one holding '?' or '#',
// which DuckDB reads as the start of connection options.
func CheckOutPath(p string) error {
	if p == "" {
		return errors.New("--out: empty name")
	}
	if b := filepath.Base(filepath.Clean(p)); b == "." || b == ".." || b == string(filepath.Separator) {
		return fmt.Errorf("%q: name a new folder, not %q", p, b)
	}
	if strings.ContainsAny(p, "?#") {
		return fmt.Errorf("%q: '?' and '#' are not allowed in a path mayday writes a database to", p)
	}
	return nil
}
