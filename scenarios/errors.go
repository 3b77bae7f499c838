package scenarios

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mayday-sim/mayday/secret"
	"go.yaml.in/yaml/v3"
)

// Error is one problem in a scenario: where it is (file, line, column, the dotted key) and
// what was wrong, including what would be valid. Line is 0 when the problem has no place in
// the file (a missing file, or a value that came from a --set override).
type Error struct {
	File   string
	Line   int
	Column int
	Key    string // dotted path, e.g. workload.arrival.poisson or faults[2].for
	Msg    string
	// Override is the override the offending value came from, e.g.
	// `--set recovery.retry.max_attempts=0` or `sweep faults[2].for=-5m`; "" for file content.
	Override string
	// Suggestion is the valid key or word nearest to a misspelt one (the "did you mean"),
	// or "" when none is near enough.
	Suggestion string
}

// Error reads like `research.yaml:12: workload.arrival.poisson: "50/x" is not a rate; ...`.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Override != "" {
		b.WriteString(e.Override)
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in one scenario, in file order. Parse returns it (as an
// error) whenever it is not empty; errors.As finds it, and each *Error in it.
type ErrorList []*Error

// Error prints one problem per line.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap exposes the individual errors to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sorted orders the list by position (override errors, which have no line, first) and drops
// exact repeats, which arise when several overrides trip the same check.
func (l ErrorList) sorted() ErrorList {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Line != l[j].Line {
			return l[i].Line < l[j].Line
		}
		return l[i].Column < l[j].Column
	})
	out := l[:0]
	seen := make(map[string]bool, len(l))
	for _, e := range l {
		e.scrub()
		s := e.Error()
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, e)
	}
	return out
}

// err returns the list as an error, or nil when it is empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	return l.sorted()
}

// closest returns the candidate nearest to s in edit distance, if it is near enough to be a
// plausible misspelling (at most a third of the longer word, and at least one edit allowed
// for short words), else "".
func closest(s string, candidates []string) string {
	// Edit distance costs len(s)·len(c); names longer than any real key are not misspellings
	// worth that.
	const longest = 64
	if len(s) > longest {
		return ""
	}
	best, bestD := "", -1
	for _, c := range candidates {
		if len(c) > longest {
			continue
		}
		d := EditDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return ""
	}
	limit := max(len(s), len(best)) / 3
	if limit < 1 {
		limit = 1
	}
	if bestD > limit {
		return ""
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b (insertions, deletions,
// substitutions), on bytes; the closest key of a scenario and the closest flag of a command
// are found with it.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Want is what would be valid, as the message states it after "; want ", or "" when the
// message does not say.
func (e *Error) Want() string {
	if i := strings.LastIndex(e.Msg, "; want "); i >= 0 {
		return e.Msg[i+len("; want "):]
	}
	return ""
}

// didYouMean is " (did you mean X?)" when a candidate is close to s, else "".
func didYouMean(s string, candidates []string) string {
	if c := closest(s, candidates); c != "" {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// withArticle is "a transient" or "an outage".
func withArticle(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// scrub keeps secrets out of the error: the value of an override is replaced by
// secret.Masked when the error's key or the override's path names a secret (api_key,
// password) or the value itself holds a secret-looking key (a flow mapping {api_key: ...}),
// that value is masked in the message too, and every credential-shaped value (secret.Find)
// is masked in every field. A secret that fails its own check (a list, a value with ": ")
// is thus reported by its key and place, never echoed.
func (e *Error) scrub() {
	if e.Override != "" {
		if from, rest, ok := strings.Cut(e.Override, " "); ok {
			if path, value, ok := strings.Cut(rest, "="); ok && value != "" &&
				(secretPath(e.Key) || secretPath(path) || secretWords(value)) {
				e.Override = from + " " + path + "=" + secret.Masked
				e.Msg = strings.ReplaceAll(e.Msg, strconv.Quote(value), secret.Masked)
				e.Msg = strings.ReplaceAll(e.Msg, value, secret.Masked)
			}
		}
	}
	e.Key = secret.Mask(e.Key)
	e.Msg = secret.Mask(e.Msg)
	e.Override = secret.Mask(e.Override)
	e.Suggestion = secret.Mask(e.Suggestion)
}

// secretPath reports whether a segment of the dotted path (tools.db.arguments.api_key,
// faults[2].for) names a secret. The format's own keys (workload.tokens, budgets.tokens)
// never do: only a name the file chooses (an argument, a tool) can.
func secretPath(path string) bool {
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
		if secret.IsKey(seg) && !formatKeys()[seg] {
			return true
		}
	}
	return false
}

// formatKeys holds every fixed key of the key tree. It is built on first use: the key tree's
// declarations are read with the decoder, which asks it.
var formatKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	var walk func(s *schema, depth int)
	walk = func(s *schema, depth int) {
		if s == nil || depth > 16 {
			return
		}
		for _, k := range s.keys {
			keys[k] = true
			walk(s.sub[k], depth+1)
		}
		walk(s.elem, depth+1)
	}
	walk(keyTree, 0)
	return keys
})

// keyTree is rootSchema, read by formatKeys through this variable: the key tree is built
// with the decoder (defaults are read as a file's values), and the decoder asks formatKeys.
var keyTree *schema

func init() { keyTree = rootSchema }

// secretWords reports whether text holds a word that names a secret, such as the key of a
// flow mapping {api_key: ...} (the format's own keys excepted, as in secretPath).
func secretWords(text string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		if secret.IsKey(w) && !formatKeys()[w] {
			return true
		}
	}
	return false
}

// MaskAssignment returns path=value (a --set or --vary argument) fit to print: the value
// replaced by secret.Masked when the path or the value names a secret, and every
// credential-shaped value masked. Commands print a refused argument through it.
func MaskAssignment(s string) string {
	if path, value, ok := strings.Cut(s, "="); ok && value != "" && (secretPath(path) || secretWords(value)) {
		s = path + "=" + secret.Masked
	}
	return secret.Mask(s)
}

// place gives each error without a line the line of its key in the file (root), or of the
// nearest enclosing key that is written there: checks made on the resolved scenario (the
// size model) know keys, not lines. A key a value came from a default for gets the line of
// the mapping that would hold it.
func (l ErrorList) place(root *yaml.Node) {
	for _, e := range l {
		if e.Line == 0 && e.Override == "" {
			e.Line, e.Column = keyLine(root, e.Key)
		}
	}
}

// keyLine is the line and column of the dotted key (faults[2].id, tools.fetch.version,
// tools."web search".timeout) in the mapping root, or of its deepest written ancestor; 1, 1
// when none is written.
func keyLine(root *yaml.Node, key string) (int, int) {
	line, col := 1, 1
	n := deref(root)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = deref(n.Content[0])
	}
	segs, ok := splitPath(key)
	if !ok {
		for _, part := range strings.Split(key, ".") {
			segs = append(segs, pathSeg{key: part})
		}
	}
	for _, sg := range segs {
		if n == nil || n.Kind != yaml.MappingNode {
			break
		}
		var val *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == sg.key {
				if n.Content[i].Line > 0 {
					line, col = n.Content[i].Line, n.Content[i].Column
				}
				val = deref(n.Content[i+1])
			}
		}
		if val == nil {
			break
		}
		n = val
		for _, idx := range sg.idx {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				n = nil
				break
			}
			n = deref(n.Content[idx])
			if n.Line > 0 {
				line, col = n.Line, n.Column
			}
		}
	}
	return line, col
}
