package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tool names are what real fleets call their tools: Bash, WebSearch,
// mcp.github.create_issue, web search/v2, 検索. A name may hold any printable characters;
// CheckToolName refuses only what cannot work: an empty name, one that is not UTF-8, one
// with control characters (a line break or a tab would break the trace's text formats and
// every message that names the tool), and one longer than MaxNameLen bytes.
//
// A path (--set, sweep, tune and every error's key) writes a key that is not a plain word
// ([A-Za-z0-9_-]+) in double quotes, with Go's (and JSON's) escapes:
// tools."mcp.github.create_issue".timeout. PathKey makes that segment; parsePath reads it.

// CheckToolName says why name cannot be a tool's name, or nil.
func CheckToolName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("an empty tool name; want at least one character")
	case !utf8.ValidString(name):
		return fmt.Errorf("the tool name %q is not UTF-8 text", name)
	case len(name) > MaxNameLen:
		return fmt.Errorf("the tool name %q is %d bytes long; want at most %d", name, len(name), MaxNameLen)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("the tool name %q holds the control character %U; want printable characters", name, r)
		}
	}
	return nil
}

// toolNamePattern is CheckToolName's rule as a JSON Schema pattern (the length is
// propertyNames' maxLength, which counts characters where MaxNameLen counts bytes): no C0
// or C1 control character. \xHH reads the same in Go's and in ECMA-262's regular
// expressions.
const toolNamePattern = `^[^\x00-\x1F\x7F-\x9F]+$`

// plainKey says whether k is written bare in a path.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// PathKey is key as one segment of a path: bare when it is a plain word, else in double
// quotes (tools."web search/v2".timeout).
func PathKey(key string) string {
	if plainKey(key) {
		return key
	}
	return strconv.Quote(key)
}

// splitPath splits a path at the dots outside double quotes into its segments, each a key
// (unquoted) and its [N] indexes. ok is false when p is not a path.
func splitPath(p string) (segs []pathSeg, ok bool) {
	if p == "" {
		return nil, false
	}
	for rest := p; ; {
		var key string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, false
			}
			if key, err = strconv.Unquote(q); err != nil || key == "" {
				return nil, false
			}
			rest = rest[len(q):]
		} else {
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			key, rest = rest[:end], rest[end:]
			if !plainKey(key) {
				return nil, false
			}
		}
		var idx []int
		for strings.HasPrefix(rest, "[") {
			j := strings.IndexByte(rest, ']')
			if j < 2 || j > 10 {
				return nil, false
			}
			digits := rest[1:j]
			for k := 0; k < len(digits); k++ {
				if digits[k] < '0' || digits[k] > '9' {
					return nil, false
				}
			}
			n, err := strconv.Atoi(digits)
			if err != nil {
				return nil, false
			}
			idx = append(idx, n)
			rest = rest[j+1:]
		}
		segs = append(segs, pathSeg{key: key, idx: idx})
		if rest == "" {
			return segs, true
		}
		if rest[0] != '.' || len(rest) == 1 {
			return nil, false
		}
		rest = rest[1:]
	}
}

// keySegments is a resolved key (an error's or a rule's: tools."a.b".timeout,
// faults[2].for) as the segments resolve walks: each key with its indexes written after
// it. A key that is not a path (a name built in Go that CheckToolName refuses) is split
// at its dots, as before quoting existed.
func keySegments(key string) []string {
	segs, ok := splitPath(key)
	if !ok {
		return strings.Split(key, ".")
	}
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = s.key + indexes(s.idx)
	}
	return out
}

// pathString writes segments back as a path, parsePath's inverse.
func pathString(segs []pathSeg) string {
	var b strings.Builder
	for i, s := range segs {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(PathKey(s.key) + indexes(s.idx))
	}
	return b.String()
}

// indexes writes list indexes as [1][2].
func indexes(idx []int) string {
	var b strings.Builder
	for _, n := range idx {
		fmt.Fprintf(&b, "[%d]", n)
	}
	return b.String()
}
