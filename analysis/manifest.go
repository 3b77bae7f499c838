package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FolderManifest is written into every folder mayday writes (run, sweep, merge, report and
// export folders) as the folder is put in place: the relative path, size and SHA-256 of
// every file in it. --force (and a new report) replaces a folder only when its contents are
// what its manifest lists: a file added or changed by someone else, or a folder with no
// manifest, is refused and named. A subfolder with a manifest of its own (a report/ inside a
// run folder) is checked by its own.
const FolderManifest = ".mayday-manifest.json"

// fullHash is the largest file hashed whole; a larger one (a database) is identified by its
// size and the hash of its first and last MiB. That tells mayday's file from another: a
// database changed by DuckDB has its headers, in its first MiB, rewritten at the change's
// checkpoint. Reading a file whole was the last step of every command that writes a folder,
// on one core: 60 ms of importing research-fleet's export (an 85 MB database), 0.26 s of
// importing traces with their prompts (147 MB). Before 8 December the bound was 256 MiB;
// a manifest records which way each file was hashed (Sampled), and a folder is checked the
// way its manifest was written.
const fullHash = 16 << 20

type manifest struct {
	Mayday string          `json:"mayday"` // what wrote the folder: "run folder", "report folder", ...
	Files  []manifestEntry `json:"files"`
}

type manifestEntry struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	Sampled bool   `json:"sampled,omitempty"` // hash of the first and last MiB only
}

// writeFolderManifest lists every file under dir (except subfolders that hold a manifest of their
// own) into dir's manifest.
func writeFolderManifest(dir, what string) error {
	m := manifest{Mayday: what, Files: []manifestEntry{}}
	err := walkOwn(dir, func(rel string, info fs.FileInfo) error {
		e, err := hashEntry(filepath.Join(dir, rel), info)
		if err != nil {
			return err
		}
		e.Path = filepath.ToSlash(rel)
		m.Files = append(m.Files, e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing the manifest of %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FolderManifest), append(b, '\n'), 0o644)
}

// walkOwn calls fn for every regular file under dir that dir's manifest covers: not the
// manifest itself, not what lies in a subfolder with a manifest of its own. Anything that is
// neither a file nor a folder (a symlink, a device) is an error: mayday writes none.
func walkOwn(dir string, fn func(rel string, info fs.FileInfo) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".":
			return nil
		case d.IsDir():
			if _, err := os.Lstat(filepath.Join(p, FolderManifest)); err == nil {
				return fs.SkipDir
			}
			return nil
		case rel == FolderManifest:
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return fn(rel, info)
	})
}

// hashEntry is the manifest entry of the file at path, hashed whole unless it is larger
// than fullHash.
func hashEntry(path string, info fs.FileInfo) (manifestEntry, error) {
	return hashFile(path, info.Size(), info.Size() > fullHash)
}

// hashFile is the manifest entry of the file at path, of size bytes: the SHA-256 of its
// first and last MiB when sampled, else of all of it.
func hashFile(path string, size int64, sampled bool) (manifestEntry, error) {
	e := manifestEntry{Bytes: size}
	f, err := os.Open(path)
	if err != nil {
		return e, err
	}
	defer f.Close()
	h := sha256.New()
	if !sampled {
		if _, err := io.Copy(h, f); err != nil {
			return e, err
		}
	} else {
		e.Sampled = true
		if _, err := io.CopyN(h, f, 1<<20); err != nil {
			return e, err
		}
		if _, err := f.Seek(-1<<20, io.SeekEnd); err != nil {
			return e, err
		}
		if _, err := io.Copy(h, f); err != nil {
			return e, err
		}
	}
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	return e, nil
}

// ErrUnrecognised reports a folder whose contents mayday cannot prove it wrote.
var ErrUnrecognised = errors.New("mayday cannot prove it wrote it")

// VerifyManifest says whether dir holds exactly what its manifest lists (files may be
// missing, none may be added or changed), and each subfolder with a manifest of its own
// likewise; or why not, naming up to ten files it does not recognise.
func VerifyManifest(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, FolderManifest))
	if err != nil {
		return fmt.Errorf("%w: it holds no %s", ErrUnrecognised, FolderManifest)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Mayday == "" {
		return fmt.Errorf("%w: its %s is not mayday's", ErrUnrecognised, FolderManifest)
	}
	listed := map[string]manifestEntry{}
	for _, e := range m.Files {
		listed[e.Path] = e
	}
	var foreign []string
	err = walkOwn(dir, func(rel string, info fs.FileInfo) error {
		want, ok := listed[filepath.ToSlash(rel)]
		if !ok || want.Bytes != info.Size() {
			foreign = append(foreign, rel)
			return nil
		}
		got, err := hashFile(filepath.Join(dir, rel), info.Size(), want.Sampled)
		if err != nil {
			return err
		}
		if got.SHA256 != want.SHA256 {
			foreign = append(foreign, rel+" (changed)")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnrecognised, err)
	}
	if sub, err := subManifests(dir); err != nil {
		return err
	} else {
		foreign = append(foreign, sub...)
	}
	if len(foreign) > 0 {
		slices.Sort(foreign)
		more := ""
		if len(foreign) > 10 {
			more = fmt.Sprintf(" and %d more", len(foreign)-10)
			foreign = foreign[:10]
		}
		return fmt.Errorf("%w: it holds %s%s, which mayday did not write there", ErrUnrecognised, strings.Join(foreign, ", "), more)
	}
	return nil
}

// subManifests verifies the subfolders of dir that carry a manifest of their own, and
// returns what they do not recognise.
func subManifests(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == dir {
			return err
		}
		if _, err := os.Lstat(filepath.Join(p, FolderManifest)); err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if err := VerifyManifest(p); err != nil {
			out = append(out, rel+"/ ("+strings.TrimPrefix(err.Error(), ErrUnrecognised.Error()+": ")+")")
		}
		return fs.SkipDir
	})
	return out, err
}
