package scenarios

import (
	"strings"
	"testing"
	"time"
)

// realNames is a scenario whose tools carry the names real fleets use.
const realNames = `name: real-names
tools:
  Bash: {latency: 1s, timeout: 10s}
  WebSearch: {latency: 2s, timeout: 30s}
  mcp.github.create_issue: {latency: 3s, timeout: 1m}
  "web search/v2": {latency: 4s, timeout: 1m}
  検索: {latency: 5s, timeout: 1m}
workload:
  investigations: 10
  tools: {Bash: 1, WebSearch: 1, mcp.github.create_issue: 1, "web search/v2": 1, 検索: 1}
faults:
  - {kind: transient, tool: mcp.github.create_issue, probability: 0.1}
  - {kind: outage, tool: "web search/v2", at: 1m, for: 1m}
sweep:
  tools."web search/v2".timeout: [10s, 20s]
`

func TestRealToolNames(t *testing.T) {
	s, err := Parse("t.yaml", []byte(realNames), []string{
		`tools."mcp.github.create_issue".latency.median=2s`, // a key the constant lacks: refused below
	})
	if err == nil || !strings.Contains(err.Error(), `tools."mcp.github.create_issue".latency`) {
		t.Fatalf("a constant has no median: %v; want the error at the quoted key", err)
	}
	s, err = Parse("t.yaml", []byte(realNames), []string{
		`tools."mcp.github.create_issue".latency={dist: lognormal, median: 2s, p95: 8s}`,
		`tools.Bash.timeout=20s`,
		`tools."検索".timeout=2m`,
		`workload.tools."web search/v2"=3`,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Bash", "WebSearch", "mcp.github.create_issue", "web search/v2", "検索"}
	if got := toolNames(s.Tools); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("tools %q, want %q", got, want)
	}
	if d := s.Tools[s.Tool("mcp.github.create_issue")].Latency; d.Kind != DistLognormal || d.Median != float64(2*time.Second) {
		t.Errorf("the override of the dotted tool's latency did not land: %+v", d)
	}
	if got := s.Tools[s.Tool("Bash")].Timeout; got != 20*time.Second {
		t.Errorf("Bash timeout %v, want 20s", got)
	}
	if got := s.Tools[s.Tool("検索")].Timeout; got != 2*time.Minute {
		t.Errorf("検索 timeout %v, want 2m", got)
	}
	for _, w := range s.Workload.Mix {
		if w.Tool == "web search/v2" && w.Weight != 3 {
			t.Errorf("web search/v2 weight %v, want 3", w.Weight)
		}
	}
	pts := s.Points()
	if len(pts) != 2 {
		t.Fatalf("%d sweep points, want 2", len(pts))
	}
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second} {
		p, err := s.With(pts[i]...)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Tools[p.Tool("web search/v2")].Timeout; got != want {
			t.Errorf("sweep point %d: timeout %v, want %v", i, got, want)
		}
	}
}

func TestQuotedPathErrors(t *testing.T) {
	for set, want := range map[string]string{
		// A tool that does not exist is named quoted, with the tools that do.
		`tools."mcp.github.close_issue".timeout=1s`: `no tool "mcp.github.close_issue" in the file (did you mean mcp.github.create_issue?); want one of Bash, WebSearch, "mcp.github.create_issue", "web search/v2", "検索"`,
		// Unquoted, the dotted name is three keys: mcp is no tool.
		`tools.mcp.github.create_issue.timeout=1s`: `no tool "mcp" in the file (a name with dots is written in double quotes: tools."mcp.github.create_issue")`,
		// An unterminated quote is not a path.
		`tools."Bash.timeout=1s`:         `is not a path`,
		`tools.web search/v2.timeout=1s`: `is not a path`,
		// A value error is reported at the quoted key.
		`tools."web search/v2".timeout=-1s`: `tools."web search/v2".timeout: "-1s" is a negative duration`,
	} {
		_, err := Parse("t.yaml", []byte(realNames), []string{set})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: %v; want %q", set, err, want)
		}
	}
}

func TestSplitPath(t *testing.T) {
	for p, want := range map[string]string{
		`tools.Bash.timeout`:                   `tools|Bash|timeout`,
		`tools."a.b".timeout`:                  `tools|a.b|timeout`,
		`tools."web search/v2".latency.median`: `tools|web search/v2|latency|median`,
		`faults[2].for`:                        `faults[2]|for`,
		`tools."say \"hi\"".timeout`:           `tools|say "hi"|timeout`,
		`tools."x[1]"`:                         `tools|x[1]`,
		`tools."\u691c\u7d22"`:                 `tools|検索`,
		`a..b`:                                 ``,
		`tools."".timeout`:                     ``,
		`tools."a"b.timeout`:                   ``,
		`tools."a`:                             ``,
		`tools.a b`:                            ``,
		`.a`:                                   ``,
		`a.`:                                   ``,
		`faults[x]`:                            ``,
		`tools."a.b"[0].x`:                     `tools|a.b[0]|x`,
		`recovery.humans.review_time.invalid_input`: `recovery|humans|review_time|invalid_input`,
	} {
		segs, ok := splitPath(p)
		var got []string
		for _, s := range segs {
			got = append(got, s.key+indexes(s.idx))
		}
		if !ok {
			got = nil
		}
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("splitPath(%s) = %q, want %q", p, g, want)
		}
		// What splits writes back as the same segments.
		if ok {
			if back, ok2 := splitPath(pathString(segs)); !ok2 || len(back) != len(segs) {
				t.Errorf("pathString(%s) = %s does not split back", p, pathString(segs))
			}
		}
	}
}

func TestCheckToolName(t *testing.T) {
	for _, ok := range []string{"Bash", "WebSearch", "mcp.github.create_issue", "web search/v2", "検索", " padded ", "a\"b", strings.Repeat("x", MaxNameLen)} {
		if err := CheckToolName(ok); err != nil {
			t.Errorf("%q: %v; want it accepted", ok, err)
		}
	}
	for _, bad := range []string{"", "a\nb", "a\tb", "a\x00b", "a\u0085b", "\xff", strings.Repeat("x", MaxNameLen+1)} {
		if err := CheckToolName(bad); err == nil {
			t.Errorf("%q accepted; want it refused", bad)
		}
	}
}

// RoundPrefix keeps a quoted tool name quoted.
func TestRoundPrefixQuoted(t *testing.T) {
	tn := Tune{Vary: []TuneParam{{Path: `tools."a.b".timeout`}, {Path: `tools."a.b".concurrency`}}}
	if p, ok := RoundPrefix(tn); !ok || p != `tools."a.b"` {
		t.Errorf("RoundPrefix = %q, %v; want tools.\"a.b\"", p, ok)
	}
}
