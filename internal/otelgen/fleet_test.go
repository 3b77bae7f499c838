package otelgen

import (
	"math"
	"math/rand/v2"
	"time"
)

// The fleets below are drawn from KNOWN parameters, written here and copied into
// analysis/testdata/otel/params.json, so that a fit of the imported traces can be checked
// against them. Everything is drawn from one PCG stream per fleet, in a fixed order, so the
// fixtures are the same on every run.

// Fleet is everything one fixture fleet is drawn from.
type Fleet struct {
	Name        string `json:"name"`
	Conventions string `json:"conventions"` // genai | openinference
	Seed        uint64 `json:"seed"`
	Start       string `json:"start"` // RFC 3339: time 0 of the fleet
	// Arrivals: a Poisson process of root investigations at ArrivalPerMinute from time 0
	// for ArrivalMinutes.
	ArrivalPerMinute float64 `json:"arrival_per_minute"`
	ArrivalMinutes   float64 `json:"arrival_minutes"`
	// Each root runs StepsMin..StepsMax steps (uniform); a step is a model turn, then one
	// tool call (with its retries). After the last step one more model turn ends the run.
	StepsMin int    `json:"steps_min"`
	StepsMax int    `json:"steps_max"`
	Tools    []Tool `json:"tools"`
	Model    Model  `json:"model"`
	Outage   Outage `json:"outage"`
	Retry    Retry  `json:"retry"`
	// With SubagentProbability a root spawns one subagent after its first model turn, and
	// waits for it; the subagent runs SubagentSteps steps the same way.
	SubagentProbability float64 `json:"subagent_probability"`
	SubagentSteps       int     `json:"subagent_steps"`
	// When a tool call has spent every attempt, the investigation asks a human with
	// HumanProbability (a human_review span, HumanReviewSeconds long, rejected) and ends
	// with an error either way (error.type retries_exhausted).
	HumanProbability   float64 `json:"human_probability"`
	HumanReviewSeconds float64 `json:"human_review_seconds"`
	// ToolCallIDs: execute_tool spans carry gen_ai.tool.call.id (the same on every attempt
	// of a call). Without, a retry is recognised by parent, tool and time only.
	ToolCallIDs bool `json:"tool_call_ids"`
}

// Tool is one tool's behaviour outside the outage. Every attempt that is not a timeout
// lasts a lognormal draw (median MedianSeconds, log-sd Sigma), whether it fails or not;
// a timeout lasts exactly TimeoutSeconds. Per attempt: timeout with TimeoutProbability,
// else an error with ErrorProbability, else success.
type Tool struct {
	Name               string  `json:"name"`
	Weight             float64 `json:"weight"` // share of steps that call it
	MedianSeconds      float64 `json:"median_seconds"`
	Sigma              float64 `json:"sigma"`
	ErrorProbability   float64 `json:"error_probability"`
	TimeoutProbability float64 `json:"timeout_probability"`
	TimeoutSeconds     float64 `json:"timeout_seconds"`
	ErrorType          string  `json:"error_type"` // error.type (genai) or exception.type (openinference)
}

// Model is the model turns: each lasts lognormal(MedianSeconds, Sigma); its input tokens
// are InputBase + InputGrowth × (the investigation's earlier turns), its output tokens
// round(lognormal(OutputMedian, OutputSigma)).
type Model struct {
	Name          string  `json:"name"`
	MedianSeconds float64 `json:"median_seconds"`
	Sigma         float64 `json:"sigma"`
	InputBase     int64   `json:"input_base"`
	InputGrowth   int64   `json:"input_growth"`
	OutputMedian  float64 `json:"output_median"`
	OutputSigma   float64 `json:"output_sigma"`
}

// Outage: every attempt of Tool sent in [StartMinute, StartMinute+Minutes) fails fast,
// after lognormal(FailMedianSeconds, 0.3), with error type ErrorType.
type Outage struct {
	Tool              string  `json:"tool"`
	StartMinute       float64 `json:"start_minute"`
	Minutes           float64 `json:"minutes"`
	FailMedianSeconds float64 `json:"fail_median_seconds"`
	ErrorType         string  `json:"error_type"`
}

// Retry: up to MaxAttempts attempts per call; after failed attempt k the next is sent
// BackoffSeconds × Multiplier^(k−1) after the failure (no jitter).
type Retry struct {
	MaxAttempts    int     `json:"max_attempts"`
	BackoffSeconds float64 `json:"backoff_seconds"`
	Multiplier     float64 `json:"multiplier"`
}

// GenAIFleet and OpenInferenceFleet are the two fixture fleets; TinyFleet is a handful of
// investigations for the format tests.
var (
	GenAIFleet = Fleet{
		Name: "genai-fleet", Conventions: "genai", Seed: 2501, Start: "2026-03-02T09:00:00Z",
		ArrivalPerMinute: 3, ArrivalMinutes: 90, StepsMin: 2, StepsMax: 4,
		Tools: []Tool{
			{Name: "search", Weight: 0.5, MedianSeconds: 1.2, Sigma: 0.5, ErrorProbability: 0.05, TimeoutProbability: 0, TimeoutSeconds: 30, ErrorType: "http.503"},
			{Name: "fetch", Weight: 0.3, MedianSeconds: 3, Sigma: 0.6, ErrorProbability: 0.08, TimeoutProbability: 0.03, TimeoutSeconds: 30, ErrorType: "http.502"},
			{Name: "backtest", Weight: 0.2, MedianSeconds: 20, Sigma: 0.4, ErrorProbability: 0.04, TimeoutProbability: 0, TimeoutSeconds: 120, ErrorType: "worker_error"},
		},
		Model:               Model{Name: "gpt-4o", MedianSeconds: 2.5, Sigma: 0.3, InputBase: 1200, InputGrowth: 350, OutputMedian: 180, OutputSigma: 0.3},
		Outage:              Outage{Tool: "fetch", StartMinute: 30, Minutes: 8, FailMedianSeconds: 0.2, ErrorType: "unavailable"},
		Retry:               Retry{MaxAttempts: 4, BackoffSeconds: 2, Multiplier: 2},
		SubagentProbability: 0.15, SubagentSteps: 2,
		HumanProbability: 0.5, HumanReviewSeconds: 300,
		ToolCallIDs: true,
	}
	OpenInferenceFleet = Fleet{
		Name: "openinference-fleet", Conventions: "openinference", Seed: 2502, Start: "2026-03-03T14:00:00Z",
		ArrivalPerMinute: 2, ArrivalMinutes: 60, StepsMin: 2, StepsMax: 3,
		Tools: []Tool{
			{Name: "retrieve", Weight: 0.6, MedianSeconds: 0.8, Sigma: 0.4, ErrorProbability: 0.04, TimeoutProbability: 0.02, TimeoutSeconds: 20, ErrorType: "ConnectionError"},
			{Name: "sql_query", Weight: 0.4, MedianSeconds: 4, Sigma: 0.5, ErrorProbability: 0.06, TimeoutProbability: 0, TimeoutSeconds: 60, ErrorType: "OperationalError"},
		},
		Model:               Model{Name: "claude-sonnet-4", MedianSeconds: 3, Sigma: 0.35, InputBase: 2000, InputGrowth: 500, OutputMedian: 250, OutputSigma: 0.35},
		Outage:              Outage{Tool: "retrieve", StartMinute: 20, Minutes: 6, FailMedianSeconds: 0.1, ErrorType: "ServiceUnavailable"},
		Retry:               Retry{MaxAttempts: 3, BackoffSeconds: 1, Multiplier: 3},
		SubagentProbability: 0.2, SubagentSteps: 2,
		HumanProbability: 0.5, HumanReviewSeconds: 240,
		ToolCallIDs: false,
	}
	TinyFleet = Fleet{
		Name: "genai-tiny", Conventions: "genai", Seed: 2503, Start: "2026-03-04T08:00:00Z",
		ArrivalPerMinute: 1, ArrivalMinutes: 6, StepsMin: 2, StepsMax: 3,
		Tools:               GenAIFleet.Tools,
		Model:               GenAIFleet.Model,
		Outage:              Outage{Tool: "fetch", StartMinute: 2, Minutes: 2, FailMedianSeconds: 0.2, ErrorType: "unavailable"},
		Retry:               GenAIFleet.Retry,
		SubagentProbability: 0.5, SubagentSteps: 1,
		HumanProbability: 1, HumanReviewSeconds: 120,
		ToolCallIDs: true,
	}
)

// The plan of one fleet: every span with its times, before any SDK sees it.

// Kind is what a planned span is.
type Kind int

const (
	KindAgent Kind = iota
	KindChat
	KindTool
	KindHuman
)

// Planned is one span of the plan.
type Planned struct {
	Kind       Kind
	Start, End time.Duration // since the fleet's start
	Children   []*Planned    // agent spans only, in start order
	Agent      string        // agent: its id
	Tool       string        // tool: its name; CallID the call's id, Attempt its number
	CallID     string
	Attempt    int
	ErrorType  string // "" = ok
	Timeout    bool
	InTokens   int64
	OutTokens  int64
	Turns      int // chat: the investigation's earlier turns
	Subagent   bool
	Terminated bool // agent: ended with an error
}

type planner struct {
	f      *Fleet
	rng    *rand.Rand
	agents int
}

// Plan draws the fleet's root investigations.
func Plan(f *Fleet) []*Planned {
	p := &planner{f: f, rng: rand.New(rand.NewPCG(f.Seed, 0x6d6179646179))}
	var roots []*Planned
	end := minutes(f.ArrivalMinutes)
	for t := time.Duration(0); ; {
		t += seconds(p.rng.ExpFloat64() * 60 / f.ArrivalPerMinute)
		if t >= end {
			return roots
		}
		steps := f.StepsMin + p.rng.IntN(f.StepsMax-f.StepsMin+1)
		roots = append(roots, p.agent(t, steps, false))
	}
}

func (p *planner) agent(start time.Duration, steps int, sub bool) *Planned {
	p.agents++
	a := &Planned{Kind: KindAgent, Start: start, Agent: itoa(p.agents), Subagent: sub}
	cur, turns := start, 0
	for step := 0; step < steps && !a.Terminated; step++ {
		cur = p.chat(a, cur, &turns)
		if step == 0 && !sub && p.rng.Float64() < p.f.SubagentProbability {
			child := p.agent(cur, p.f.SubagentSteps, true)
			a.Children = append(a.Children, child)
			cur = child.End
		}
		tool := p.pickTool()
		ok, end := p.call(a, tool, cur, a.Agent+"-"+itoa(step+1))
		cur = end
		if !ok {
			if p.rng.Float64() < p.f.HumanProbability {
				h := &Planned{Kind: KindHuman, Start: cur, End: cur + seconds(p.f.HumanReviewSeconds), ErrorType: "rejected"}
				a.Children = append(a.Children, h)
				cur = h.End
			}
			a.Terminated = true
		}
	}
	if !a.Terminated {
		cur = p.chat(a, cur, &turns)
	}
	a.End = cur
	if a.Terminated {
		a.ErrorType = "retries_exhausted"
	}
	return a
}

func (p *planner) chat(a *Planned, at time.Duration, turns *int) time.Duration {
	m := p.f.Model
	c := &Planned{Kind: KindChat, Start: at, Turns: *turns,
		InTokens:  m.InputBase + m.InputGrowth*int64(*turns),
		OutTokens: int64(math.Round(lognormal(p.rng, m.OutputMedian, m.OutputSigma)))}
	c.End = at + seconds(lognormal(p.rng, m.MedianSeconds, m.Sigma))
	*turns++
	a.Children = append(a.Children, c)
	return c.End
}

func (p *planner) pickTool() *Tool {
	u := p.rng.Float64()
	for i := range p.f.Tools {
		if u -= p.f.Tools[i].Weight; u < 0 {
			return &p.f.Tools[i]
		}
	}
	return &p.f.Tools[len(p.f.Tools)-1]
}

// call plans the attempts of one tool call from at; it reports whether one succeeded and
// when the call ended.
func (p *planner) call(a *Planned, tool *Tool, at time.Duration, callID string) (bool, time.Duration) {
	r, o := p.f.Retry, p.f.Outage
	for attempt := 1; ; attempt++ {
		s := &Planned{Kind: KindTool, Start: at, Tool: tool.Name, CallID: callID, Attempt: attempt}
		u := p.rng.Float64()
		d := lognormal(p.rng, tool.MedianSeconds, tool.Sigma) // drawn always, to keep the stream aligned
		switch {
		case tool.Name == o.Tool && at >= minutes(o.StartMinute) && at < minutes(o.StartMinute+o.Minutes):
			s.End = at + seconds(lognormal(p.rng, o.FailMedianSeconds, 0.3))
			s.ErrorType = o.ErrorType
		case u < tool.TimeoutProbability:
			s.End, s.ErrorType, s.Timeout = at+seconds(tool.TimeoutSeconds), "timeout", true
		case u < tool.TimeoutProbability+tool.ErrorProbability:
			s.End, s.ErrorType = at+seconds(d), tool.ErrorType
		default:
			s.End = at + seconds(d)
		}
		a.Children = append(a.Children, s)
		if s.ErrorType == "" {
			return true, s.End
		}
		if attempt == r.MaxAttempts {
			return false, s.End
		}
		at = s.End + seconds(r.BackoffSeconds*math.Pow(r.Multiplier, float64(attempt-1)))
	}
}

func lognormal(rng *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*rng.NormFloat64())
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
func minutes(m float64) time.Duration { return seconds(m * 60) }

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
