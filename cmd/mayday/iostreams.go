package main

import (
	"io"
	"os"
)

// ioStreams is where a command reads and writes; tests substitute buffers.
type ioStreams struct {
	In       io.Reader
	Out      io.Writer
	ErrOut   io.Writer
	Terminal bool // stderr is a terminal: progress may be drawn there
}

func systemIO() *ioStreams {
	return &ioStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Terminal: isTerminal(os.Stderr)}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
