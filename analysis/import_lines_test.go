//go:build duckdb_arrow

package analysis

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A file's lines come back as they are, each with its newline (the last without one when
// the file does not end in one), whatever their lengths against the reader's buffer (16
// bytes here, so most lines are read past it and carried over), and the first line longer
// than limit is refused as too long.
func TestLineReader(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lines := rapid.SliceOfN(rapid.StringMatching(`[a-z{}"]{0,70}`), 1, 12).Draw(t, "lines")
		ending := rapid.Bool().Draw(t, "ending newline")
		limit := int64(rapid.IntRange(1, 80).Draw(t, "limit"))
		text := strings.Join(lines, "\n")
		if ending {
			text += "\n"
		}
		lr := lineReader{br: bufio.NewReaderSize(strings.NewReader(text), 16)}
		rest := text
		var buf []byte
		for rest != "" {
			want := rest
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				want = rest[:i+1]
			}
			rest = rest[len(want):]
			got, err := lr.readLine(buf[:0], limit)
			if int64(len(want)) > limit {
				var le *limitError
				if !errors.As(err, &le) {
					t.Fatalf("a line of %d bytes with limit %d: %q, %v; want it refused as too long", len(want), limit, got, err)
				}
				return
			}
			if string(got) != want || err != nil && !(err == io.EOF && rest == "") {
				t.Fatalf("got %q, %v; want %q", got, err, want)
			}
			buf = got
		}
		if got, err := lr.readLine(buf[:0], limit); len(got) != 0 || err != io.EOF {
			t.Fatalf("after the last line: %q, %v; want nothing and io.EOF", got, err)
		}
	})
}

// A long line is read straight into its own buffer, as much as the buffer has room for at a
// time: one of 64 KiB through a reader of 4 KiB takes a few reads of growing size, where
// reading it through the reader's buffer took sixteen of 4 KiB.
func TestLineReaderReadsLongLinesDirectly(t *testing.T) {
	line := bytes.Repeat([]byte("x"), 64<<10)
	src := &readSizes{r: bytes.NewReader(append(line, "\nnext\n"...))}
	lr := lineReader{br: bufio.NewReaderSize(src, 4096)}
	got, err := lr.readLine(nil, 1<<20)
	if err != nil || len(got) != len(line)+1 {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(line)+1)
	}
	if next, err := lr.readLine(nil, 1<<20); string(next) != "next\n" || err != nil {
		t.Fatalf("the next line: %q, %v", next, err)
	}
	if len(src.sizes) > 8 || slices.Max(src.sizes) <= 4096 {
		t.Fatalf("%d reads (%v): the line went through the reader's buffer", len(src.sizes), src.sizes)
	}
}

// readSizes records the size of each read asked of r.
type readSizes struct {
	r     io.Reader
	sizes []int
}

func (s *readSizes) Read(p []byte) (int, error) {
	s.sizes = append(s.sizes, len(p))
	return s.r.Read(p)
}
