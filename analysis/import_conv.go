package analysis

import (
	"slices"
	"strings"
)

// A convention declares how the spans of one instrumentation read as mayday's records:
// which spans are investigations, model turns and tool attempts, and which attributes name
// the tool, the call, its arguments, tokens, the model and the session. Each convention is
// one file (import_conv_*.go) that registers its declaration; docs/import.md and
// docs/extending.md describe the fields. A convention declares; the rules that use the
// declarations (roles, retries, failure classes, sub-agents) are written once, in
// import_spans.go and import_build.go.
type convention struct {
	// Name is what --conventions takes and what the import summary counts spans by.
	Name string
	// Rank orders detection: the convention of lowest rank whose Detect matches a span
	// is the span's. The fallback convention (GenAI) has the highest rank.
	Rank int
	// DetectAttrs: a span carrying any of these attributes is of this convention.
	// DetectAttrPrefixes: or an attribute whose key starts with one of these.
	// DetectNamePrefixes: or whose name starts with one of these.
	DetectAttrs, DetectAttrPrefixes, DetectNamePrefixes []string
	// DetectAttrSets: or every attribute of one of these sets (for a library whose own keys
	// are common words, each of which alone could be anyone's).
	DetectAttrSets [][]string
	// ProducerAttrs: attributes only the instrumented library itself writes; a span
	// carrying one is of this convention whatever the rank, even when another
	// instrumentation added its own attributes to the span.
	ProducerAttrs []string

	// KindAttrs name the attribute that says what a span is (its value upper-cased is
	// looked up in Kinds), e.g. openinference.span.kind.
	KindAttrs []string
	Kinds     map[string]spanRole
	// ChainKinds: kind values (upper-cased) of a generic unit of work that is an agent only
	// where it stands: a trace's root span, or the span a tool call ran (a sub-agent). A
	// chain under anything else is a step of its agent (agentChains in import_build.go).
	ChainKinds []string
	// Operations: the operation attribute's value (OperationAttrs), else the span's whole
	// name, else its first word, looked up in Names.
	OperationAttrs []string
	Names          map[string]spanRole
	// ModelAttrs: a span of no other role that carries one of these is a model turn;
	// ToolAttrs: one that carries one of these (and none of ModelAttrs) is a tool call.
	ModelAttrs, ToolAttrs []string

	// Tool names the tool of a tool span (the first attribute present), else the span
	// name with ToolNamePrefix cut off.
	Tool           []string
	ToolNamePrefix string
	// CallID: the tool call's id; Args: its arguments as the trace records them; Attempt:
	// an attempt number counted from 1; Resend: one counted from 0.
	CallID, Args, Attempt, Resend []string
	// ArgsEvents: "event#attribute", where a library writes a tool call's arguments in an
	// event of the tool's span rather than in an attribute (the Strands Agents SDK:
	// gen_ai.tool.message#content); read when no Args attribute is there. The import keeps
	// the first event of each such name on a span, besides its exception events.
	ArgsEvents []string
	// Tokens: input, output, and a total used only when neither of the others is present.
	InputTokens, OutputTokens, TotalTokens []string
	// TokenEvent: an event whose attributes carry the token counts under those names, read
	// when the span's own attributes carry none (Ax: gen_ai.usage). The import keeps the
	// first event of that name on a span.
	TokenEvent string
	// Model: the model a model turn used.
	Model []string
	// Session: a conversation, session or thread id, which joins an agent run in its own
	// trace to the run it was started from.
	Session []string
	// ErrorType: the error's type (before the exception event's exception.type).
	ErrorType []string
	// WrapperErrors: error types the library wraps every error in, which name no error (as
	// Error does): the message's own error name, else its first line, is read instead.
	WrapperErrors []string
	// ExceptionFails: an exception event marks its span failed whatever its status says
	// (for a producer that records the event only for a failed run but leaves the status
	// OK, which OpenTelemetry makes final once set).
	ExceptionFails bool
	// ErrorLevel: an attribute whose value ERROR (any case) marks the span failed, for a
	// library that records failures as a level rather than as the span's status (Langfuse's
	// langfuse.observation.level); ErrorMessage: where such a library writes the error's
	// message (read when the span's status carries none).
	ErrorLevel, ErrorMessage []string
	// FailsWithException: the producer records each failure of its own as an exception
	// event, so an error status on a span without one (and without an error type) was set
	// by something else and is not read as a failure. OpenInference's processor for the AI
	// SDK copies a trace's first error onto every later span whose status was unset.
	FailsWithException bool
	// Request and Response: a model turn's request and response as JSON (the messages it
	// was sent and answered). The tool calls a response asks for and the tool results a
	// request reports are read from them (toolResultsReported in import_build.go).
	Request, Response []string
}

// conventions is every registered convention, in detection order.
var conventions []*convention

// producers maps each convention's ProducerAttrs to it.
var producers = map[string]*convention{}

// producerLens holds the lengths of the producers' keys (longer ones share the last bit):
// a key of another length is no producer's, which detectConvention learns without hashing
// it (a model call of an agent library carries dozens of long attribute keys).
var producerLens [65]bool

// mayBeProducer reports whether key may be one of producers' keys.
func mayBeProducer(key string) bool { return producerLens[min(len(key), len(producerLens)-1)] }

// readEvents are the events some convention reads a tool call's arguments (ArgsEvents) or
// a model call's tokens (TokenEvent) from.
var readEvents = map[string]bool{}

// args is a tool span's arguments as its convention's declaration finds them: an Args
// attribute, else an attribute of an ArgsEvents event.
func (c *convention) args(s *inSpan) string {
	if a := s.str(c.Args...); a != "" {
		return a
	}
	for _, ev := range c.ArgsEvents {
		name, key, _ := strings.Cut(ev, "#")
		if e, ok := s.event(name); ok {
			if a := e.str(key); a != "" {
				return a
			}
		}
	}
	return ""
}

// event is s's first kept event of that name as a span of its attributes alone, so that
// the attribute readers (str, num) read it as they read a span.
func (s *inSpan) event(name string) (inSpan, bool) {
	for _, e := range s.events {
		if e.name == name {
			return inSpan{attrs: e.attrs}, true
		}
	}
	return inSpan{}, false
}

// register adds a convention; each import_conv_*.go file calls it from init.
func register(c *convention) {
	for _, k := range c.ProducerAttrs {
		producers[k] = c
		producerLens[min(len(k), len(producerLens)-1)] = true
	}
	for _, ev := range c.ArgsEvents {
		name, _, _ := strings.Cut(ev, "#")
		readEvents[name] = true
	}
	if c.TokenEvent != "" {
		readEvents[c.TokenEvent] = true
	}
	conventions = append(conventions, c)
	slices.SortStableFunc(conventions, func(a, b *convention) int { return a.Rank - b.Rank })
}

// conventionNamed returns the registered convention of that name, or nil.
func conventionNamed(name string) *convention {
	for _, c := range conventions {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ConventionNames lists the conventions --conventions takes besides auto, in detection
// order.
func ConventionNames() []string {
	names := make([]string, 0, len(conventions))
	for _, c := range conventions {
		names = append(names, c.Name)
	}
	return names
}

// detect reports whether s is of convention c.
func (c *convention) detect(s *inSpan) bool {
	for _, p := range c.DetectNamePrefixes {
		if strings.HasPrefix(s.name, p) {
			return true
		}
	}
	for _, kv := range s.attrs {
		if slices.Contains(c.DetectAttrs, kv.key) {
			return true
		}
		for _, p := range c.DetectAttrPrefixes {
			if strings.HasPrefix(kv.key, p) {
				return true
			}
		}
	}
	for _, set := range c.DetectAttrSets {
		if !slices.ContainsFunc(set, func(k string) bool { return s.attr(k) == nil }) {
			return true
		}
	}
	return false
}

// detectConvention is the convention whose producer attributes s carries, else the first
// registered convention that detects s; the last one (the fallback) when none does.
func detectConvention(s *inSpan) *convention {
	if len(producers) > 0 {
		for _, kv := range s.attrs {
			if !mayBeProducer(kv.key) {
				continue
			}
			if c := producers[kv.key]; c != nil {
				return c
			}
		}
	}
	for _, c := range conventions[:len(conventions)-1] {
		if c.detect(s) {
			return c
		}
	}
	return conventions[len(conventions)-1]
}

// role reads s's role from the declaration: its kind attribute, its operation, its name,
// else model attributes. Human and supervisor steps are recognised by name in every
// convention (roleOf in import_spans.go).
func (c *convention) role(s *inSpan) spanRole {
	if k := s.str(c.KindAttrs...); k != "" {
		if r, ok := c.Kinds[strings.ToUpper(k)]; ok {
			return r
		}
	}
	if op := s.str(c.OperationAttrs...); op != "" {
		if r, ok := c.Names[op]; ok {
			return r
		}
		if first, _, _ := strings.Cut(op, " "); first != op {
			if r, ok := c.Names[first]; ok {
				return r
			}
		}
	}
	if r, ok := c.Names[s.name]; ok {
		return r
	}
	if first, _, _ := strings.Cut(s.name, " "); first != s.name {
		if r, ok := c.Names[first]; ok {
			return r
		}
	}
	for _, k := range c.ModelAttrs {
		if s.attr(k) != nil {
			return roleModel
		}
	}
	for _, k := range c.ToolAttrs {
		if s.attr(k) != nil {
			return roleTool
		}
	}
	return roleOther
}

// isChain reports whether s's kind is one of the convention's ChainKinds.
func (c *convention) isChain(s *inSpan) bool {
	if len(c.ChainKinds) == 0 {
		return false
	}
	k := s.str(c.KindAttrs...)
	return k != "" && slices.Contains(c.ChainKinds, strings.ToUpper(k))
}

// toolName is the tool a tool span called.
func (c *convention) toolName(s *inSpan) string {
	if t := s.str(c.Tool...); t != "" {
		return t
	}
	if c.ToolNamePrefix != "" {
		if t, ok := strings.CutPrefix(s.name, c.ToolNamePrefix); ok && t != "" {
			return t
		}
	}
	return s.name
}

// attempt reads an explicit attempt number (1 = the first try).
func (c *convention) attempt(s *inSpan) (int64, bool) {
	if n, ok := s.num(c.Attempt...); ok {
		return n, true
	}
	if n, ok := s.num(c.Resend...); ok {
		return n + 1, true
	}
	return 0, false
}

// tokens reads a span's input and output tokens: from its attributes, else from its
// TokenEvent's.
func (c *convention) tokens(s *inSpan) (in, out int64) {
	in, out, ok := c.tokensIn(s)
	if !ok && c.TokenEvent != "" {
		if e, ok := s.event(c.TokenEvent); ok {
			in, out, _ = c.tokensIn(&e)
		}
	}
	return in, out
}

// tokensIn reads the token counts among s's attributes, and whether any was there.
func (c *convention) tokensIn(s *inSpan) (in, out int64, found bool) {
	in, okIn := s.num(c.InputTokens...)
	out, okOut := s.num(c.OutputTokens...)
	total, okTotal := s.num(c.TotalTokens...)
	if okTotal && !okIn && !okOut {
		in = total
	}
	return in, out, okIn || okOut || okTotal
}

// Attribute lists several conventions share.
var (
	genAIInputTokens  = []string{"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"}
	genAIOutputTokens = []string{"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"}
	genAIModel        = []string{"gen_ai.response.model", "gen_ai.request.model"}
	genAIModelAttrs   = []string{"gen_ai.request.model", "gen_ai.response.model", "gen_ai.system", "gen_ai.provider.name",
		"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"}
	attemptAttrs = []string{"attempt", "retry.attempt", "gen_ai.tool.call.attempt"}
	resendAttrs  = []string{"http.request.resend_count"}
)
