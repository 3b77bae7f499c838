//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"

	"github.com/mayday-sim/mayday/analysis"
)

// folderTx is the one folder transaction of run, check, sweep and report: stage the folder,
// let fill write into it, and put it in place. fill reports whether what it wrote is whole
// (not cut short by an interrupt). A forced re-run that was interrupted before it was whole
// leaves the old folder in place: an old whole run is never replaced by a partial one.
type folderTx struct {
	io        *ioStreams
	Dir       string
	Force     bool
	What      string                 // "run folder", "sweep folder", "report folder"
	Recognise func(dir string) error // what --force may replace; nil: analysis.IsRunFolder
	Fill      func(f *analysis.Folder) (whole bool, err error)
}

// txResult says what a folderTx left on disk.
type txResult struct {
	Stored  bool // the new folder is at Dir
	KeptOld bool // interrupted: the old folder at Dir was left as it was
}

func (t folderTx) run(ctx context.Context) (txResult, error) {
	rec := t.Recognise
	if rec == nil {
		rec = analysis.IsRunFolder
	}
	f, err := analysis.NewFolderOf(t.Dir, t.Force, t.What, rec)
	if err != nil {
		return txResult{}, badInput(err) // the folder exists, is not ours, or cannot be made there
	}
	for _, s := range f.Stale {
		fmt.Fprintln(t.io.ErrOut, "mayday:", s)
	}
	whole, err := t.Fill(f)
	if err != nil {
		f.Abort()
		return txResult{}, err
	}
	if f.Replacing && !whole && ctx.Err() != nil {
		f.Abort()
		return txResult{KeptOld: true}, nil
	}
	if err := f.Commit(); err != nil {
		f.Abort()
		return txResult{}, internal(err)
	}
	return txResult{Stored: true}, nil
}

// keptOldMessage is what an interrupted --force says.
func keptOldMessage(what, dir string) error {
	return interrupted("the new %s was not whole, so nothing was stored and the old %s %s was left as it was", what, what, dir)
}
