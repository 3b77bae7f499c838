package main

import (
	"fmt"
	"strings"
	"time"
)

// progress draws a one-line progress bar on a terminal's stderr, at most a few times a
// second; it is silent when stderr is not a terminal or output is quiet. It only reads the
// wall clock for display; nothing it sees reaches a result.
type progress struct {
	io    *ioStreams
	on    bool
	label string
	units int // seeds, sweep points ...
	start time.Time
	last  time.Time
}

func newProgress(io *ioStreams, quiet bool, label string, units int) *progress {
	return &progress{io: io, on: io.Terminal && !quiet, label: label, units: units, start: time.Now()}
}

// seed returns the progress callback of unit i (done and total investigations).
func (p *progress) seed(i int) func(done, total int) {
	if !p.on {
		return nil
	}
	unitStart := time.Now()
	return func(done, total int) {
		now := time.Now()
		if now.Sub(p.last) < 200*time.Millisecond && done < total {
			return
		}
		p.last = now
		frac := 0.0
		if total > 0 {
			frac = float64(done) / float64(total)
		}
		const width = 24
		fill := int(frac * width)
		elapsed := now.Sub(unitStart).Seconds()
		rate, eta := 0.0, "?"
		if elapsed > 0 && done > 0 {
			rate = float64(done) / elapsed
			eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
		}
		unit := ""
		if p.units > 1 {
			unit = fmt.Sprintf(" %d/%d", i+1, p.units)
		}
		fmt.Fprintf(p.io.ErrOut, "\r%s%s [%s%s] %d/%d investigations %.0f/s eta %s   ",
			p.label, unit, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, total, rate, eta)
	}
}

// phase shows what a command is doing after its runs: storing, writing the file, reading
// results back, so that no step of it is silent.
func (p *progress) phase(what string) {
	if p.on {
		fmt.Fprintf(p.io.ErrOut, "\r\033[K%s: %s ...", p.label, what)
	}
}

// update is phase for a step that repeats quickly (a file written, a run read): it
// redraws at most five times a second.
func (p *progress) update(what string) {
	if !p.on {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		p.phase(what)
	}
}

// step reports that done of the units (runs) have finished, with their rate and the time
// left; detail is shown after the count, e.g. " (2/3 points)".
func (p *progress) step(done int, detail string) {
	if !p.on {
		return
	}
	elapsed := time.Since(p.start).Seconds()
	rate, eta := 0.0, "?"
	if elapsed > 0 {
		rate = float64(done) / elapsed
	}
	if rate > 0 {
		eta = (time.Duration(float64(p.units-done)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(p.io.ErrOut, "\r%s %d/%d runs%s %.1f runs/s eta %s   ", p.label, done, p.units, detail, rate, eta)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
	}
}
