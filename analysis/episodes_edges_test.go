//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// edgeEpisodesCase: recovery episodes whose end is a valid result at their edges. A step
// recovers at the end of its first valid result at or after its first sign of trouble
// (docs/metrics.md, median_recovery_time). Investigation 1's step was valid at 5 s, before
// any trouble; an attempt sent at 10 s fails, and the step is valid again at 25 s and at
// 35 s: the episode runs from 10 s to 25 s (15 s; not from the valid result before it, nor
// to the last one). Investigation 2's step is valid at 50 s, and a send of the same
// operation is blocked at that instant: a valid result at the very start of the episode
// ends it, 0 s (without it the episode would last until the investigation ends, 60 s).
func edgeEpisodesCase() viewCase {
	var c record.Collector
	var span uint64
	sp := func(inv int64, op record.Operation, tool string, attempt int32, start, end int64, st record.Status) {
		span++
		c.Spans = append(c.Spans, record.Span{TraceID: inv, SpanID: span, InvestigationID: inv, Operation: op, Tool: tool,
			HasKey: true, OpKey: record.OpKey{Investigation: inv}, Attempt: attempt, Start: start, End: end, Status: st})
	}
	sp(1, record.OpExecuteTool, "api", 1, 0, 5*second, record.StatusOK)
	sp(1, record.OpValidate, "", 1, 5*second, 5*second, record.StatusOK)
	sp(1, record.OpExecuteTool, "api", 2, 10*second, 15*second, record.StatusError)
	sp(1, record.OpExecuteTool, "api", 3, 20*second, 25*second, record.StatusOK)
	sp(1, record.OpValidate, "", 3, 25*second, 25*second, record.StatusOK)
	sp(1, record.OpExecuteTool, "api", 4, 30*second, 35*second, record.StatusOK)
	sp(1, record.OpValidate, "", 4, 35*second, 35*second, record.StatusOK)
	sp(2, record.OpExecuteTool, "api", 1, 40*second, 50*second, record.StatusOK)
	sp(2, record.OpValidate, "", 1, 50*second, 50*second, record.StatusOK)
	sp(2, record.OpExecuteTool, "api", 0, 50*second, 50*second, record.StatusBlocked)
	for _, inv := range []struct{ id, ended int64 }{{1, 40 * second}, {2, 60 * second}} {
		c.Investigations = append(c.Investigations, record.Investigation{InvestigationID: inv.id, RootID: inv.id, Ended: true,
			EndedAt: inv.ended, FinalState: "completed", Tokens: 10})
	}
	return referenceCaseOf("recovery episodes ended by a valid result at their edges", map[string]*record.Collector{"edge-episodes": &c},
		func(id string, want refResult) error {
			var got []string
			for _, e := range want.Episodes {
				got = append(got, fmt.Sprintf("%s %s %v", e.OpKey, e.Outcome, e.Seconds))
			}
			if w := fmt.Sprint([]string{"1/0 recovered 15", "2/0 recovered 0"}); fmt.Sprint(got) != w {
				return fmt.Errorf("episodes %v, want %v", got, w)
			}
			return nil
		})
}

func TestEpisodesEndedAtTheirEdges(t *testing.T) { runViewCase(t, edgeEpisodesCase()) }

// firstToolEpisodeCase: an episode's tool is its first sign's tool, NULL when that sign has
// none, even if a later sign of the step names one (docs/metrics.md, recovery_episodes).
// The step's revision 0 is found invalid at 5 s, and no tool span of that revision names
// its tool; revision 1's attempt on api fails at 10 s, and a valid result comes at 20 s.
// The episode runs from 5 s to 20 s, and its tool is NULL, not api.
func firstToolEpisodeCase() viewCase {
	var c record.Collector
	var span uint64
	sp := func(op record.Operation, tool string, rev, attempt int32, start, end int64, st record.Status) {
		span++
		c.Spans = append(c.Spans, record.Span{TraceID: 1, SpanID: span, InvestigationID: 1, Operation: op, Tool: tool,
			HasKey: true, OpKey: record.OpKey{Investigation: 1, Revision: rev}, Attempt: attempt, Start: start, End: end, Status: st})
	}
	sp(record.OpValidate, "", 0, 1, 5*second, 5*second, record.StatusInvalid)
	sp(record.OpExecuteTool, "api", 1, 1, 10*second, 15*second, record.StatusError)
	sp(record.OpExecuteTool, "api", 1, 2, 15*second, 20*second, record.StatusOK)
	sp(record.OpValidate, "", 1, 2, 20*second, 20*second, record.StatusOK)
	c.Investigations = append(c.Investigations, record.Investigation{InvestigationID: 1, RootID: 1, Ended: true,
		EndedAt: 30 * second, FinalState: "completed", Tokens: 10})
	return referenceCaseOf("a recovery episode whose first sign names no tool", map[string]*record.Collector{"first-tool": &c},
		func(id string, want refResult) error {
			var got []string
			for _, e := range want.Episodes {
				got = append(got, fmt.Sprintf("%s %s %v tool %q", e.OpKey, e.Outcome, e.Seconds, e.Tool))
			}
			if w := fmt.Sprint([]string{`1/0 recovered 15 tool ""`}); fmt.Sprint(got) != w {
				return fmt.Errorf("episodes %v, want %v", got, w)
			}
			return nil
		})
}

func TestEpisodeToolIsTheFirstSigns(t *testing.T) { runViewCase(t, firstToolEpisodeCase()) }
