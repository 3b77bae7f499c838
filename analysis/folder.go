package analysis

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// DBFile and SummaryFile are the names of a run folder's two files.
const (
	DBFile      = "mayday.duckdb"
	SummaryFile = "summary.json"
)

// ErrExists reports a run folder that already exists (use --force to replace it).
var ErrExists = errors.New("already exists")

// Folder is a run folder being written. Everything goes into a hidden staging folder beside
// the target, which Commit renames into place, so a failed or interrupted command never
// leaves a half-written run folder, and a forced run replaces the old one only once the new
// one is whole.
type Folder struct {
	Dir   string // the final location
	stage string
	force bool
}

// NewFolder prepares to write the run folder dir. It refuses an existing dir unless force.
func NewFolder(dir string, force bool) (*Folder, error) {
	if dir == "" {
		return nil, errors.New("--out: empty folder name")
	}
	if _, err := os.Stat(dir); err == nil && !force {
		return nil, fmt.Errorf("run folder %s: %w; choose another --out or pass --force to replace it", dir, ErrExists)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("run folder %s: %w", dir, err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("run folder %s: %w", dir, err)
	}
	stage := filepath.Join(parent, "."+filepath.Base(filepath.Clean(dir))+".tmp-"+strconv.Itoa(os.Getpid()))
	_ = os.RemoveAll(stage)
	if err := os.Mkdir(stage, 0o755); err != nil {
		return nil, fmt.Errorf("run folder %s: %w", dir, err)
	}
	return &Folder{Dir: dir, stage: stage, force: force}, nil
}

// Path returns the path of a file inside the folder being written.
func (f *Folder) Path(name string) string { return filepath.Join(f.stage, name) }

// DBPath is the path of the database inside the folder being written.
func (f *Folder) DBPath() string { return f.Path(DBFile) }

// Commit moves the finished folder into place, replacing an old one when forced.
func (f *Folder) Commit() error {
	var old string
	if _, err := os.Stat(f.Dir); err == nil {
		if !f.force {
			return fmt.Errorf("run folder %s: %w", f.Dir, ErrExists)
		}
		old = f.stage + ".old"
		if err := os.Rename(f.Dir, old); err != nil {
			return fmt.Errorf("run folder %s: %w", f.Dir, err)
		}
	}
	if err := os.Rename(f.stage, f.Dir); err != nil {
		if old != "" {
			_ = os.Rename(old, f.Dir)
		}
		return fmt.Errorf("run folder %s: %w", f.Dir, err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// Abort removes everything written so far.
func (f *Folder) Abort() { _ = os.RemoveAll(f.stage) }
