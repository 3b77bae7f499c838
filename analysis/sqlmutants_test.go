package analysis

import (
	"fmt"
	"strconv"
	"strings"
)

// This file generates mutants of the view SQL, one change at a time, for the mutation
// harness (mutate_sql_test.go): a comparison operator moved across its boundary or negated,
// a numeric literal moved by one unit of its last digit, an aggregate swapped for its
// neighbour (median and avg, min and max, quantile_cont and quantile_disc, a DISTINCT
// dropped), a NOT dropped, and each term of a WHERE, ON, HAVING or WHEN condition dropped
// (replaced by TRUE; by FALSE for one of several OR'ed terms). Comments, string literals
// and quoted identifiers are never mutated.

// sqlToken is one lexical token of a view file: its byte range and paren depth.
type sqlToken struct {
	text       string
	start, end int
	depth      int
	kind       byte // 'w' word, 'n' number, 'o' operator, 'p' punctuation
}

// sqlMutant is one mutated view file.
type sqlMutant struct {
	file string // e.g. views/05_incidents.sql
	line int
	desc string // "<original> → <replacement>"
	src  string // the source line of the change, trimmed
	sql  string // the whole mutated file
	nth  int    // 1 for the first such change on such a line in the file, 2 for a second one, ...
}

// key identifies a mutant across edits elsewhere in its file (line numbers move): the
// file, the change and the text of its line, then " | #n" for the n-th (n > 1) identical
// change on a line of the same text in the file (coalesce(a, 0) and coalesce(b, 0) side
// by side, or a line repeated in two CASEs).
func (m sqlMutant) key() string {
	k := m.file + " | " + m.desc + " | " + m.src
	if m.nth > 1 {
		k += " | #" + strconv.Itoa(m.nth)
	}
	return k
}

func (m sqlMutant) String() string {
	if m.nth > 1 {
		return fmt.Sprintf("%s:%d: %s #%d  (%s)", m.file, m.line, m.desc, m.nth, m.src)
	}
	return fmt.Sprintf("%s:%d: %s  (%s)", m.file, m.line, m.desc, m.src)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// lexSQL splits sql into tokens, skipping comments, string literals and quoted identifiers
// (they become no token; a quoted identifier is a word token that is never mutated).
func lexSQL(sql string) []sqlToken {
	var toks []sqlToken
	depth := 0
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			i += j
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) && (sql[j] != c || j+1 < len(sql) && sql[j+1] == c) {
				if sql[j] == c {
					j++
				}
				j++
			}
			toks = append(toks, sqlToken{text: sql[i : j+1], start: i, end: j + 1, depth: depth, kind: 'q'})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(sql) && (sql[j] >= '0' && sql[j] <= '9' || sql[j] == '.') {
				j++
			}
			toks = append(toks, sqlToken{text: sql[i:j], start: i, end: j, depth: depth, kind: 'n'})
			i = j
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			toks = append(toks, sqlToken{text: sql[i:j], start: i, end: j, depth: depth, kind: 'w'})
			i = j
		default:
			n := 1
			for _, op := range []string{"<=", ">=", "<>", "!=", "::", "||", "//", "->"} {
				if strings.HasPrefix(sql[i:], op) {
					n = 2
				}
			}
			tok := sqlToken{text: sql[i : i+n], start: i, end: i + n, kind: 'o'}
			switch c {
			case '(':
				tok.depth, tok.kind = depth, 'p'
				depth++
			case ')':
				depth--
				tok.depth, tok.kind = depth, 'p'
			case ',', ';':
				tok.depth, tok.kind = depth, 'p'
			default:
				tok.depth = depth
			}
			toks = append(toks, tok)
			i += n
		}
	}
	return toks
}

var (
	comparisonMutants = map[string][]string{
		"<": {"<="}, "<=": {"<"}, ">": {">="}, ">=": {">"}, "=": {"<>"}, "<>": {"="}, "!=": {"="},
	}
	// aggregateMutants are swaps of a function name (followed by "(").
	aggregateMutants = map[string]string{
		"median": "avg", "avg": "median", "min": "max", "max": "min",
		"quantile_cont": "quantile_disc", "quantile_disc": "quantile_cont",
		"least": "greatest", "greatest": "least", "arg_min": "arg_max", "arg_max": "arg_min",
		"bool_or": "bool_and", "bool_and": "bool_or",
	}
	// conditionStarts open a boolean condition whose AND'ed terms can be dropped.
	conditionStarts = map[string]bool{"WHERE": true, "ON": true, "HAVING": true, "WHEN": true, "QUALIFY": true}
	// conditionEnds close a condition at its own paren depth.
	conditionEnds = map[string]bool{
		"GROUP": true, "ORDER": true, "HAVING": true, "WINDOW": true, "QUALIFY": true, "LIMIT": true,
		"UNION": true, "EXCEPT": true, "INTERSECT": true, "SELECT": true, "FROM": true, "JOIN": true,
		"LEFT": true, "RIGHT": true, "INNER": true, "FULL": true, "CROSS": true, "WHERE": true,
		"USING": true, "THEN": true, "ELSE": true, "END": true, "AS": true, "ON": true, "WHEN": true,
	}
)

// numberMutants moves a literal by one unit of its last digit, both ways (not below 0).
func numberMutants(lit string) []string {
	dot := strings.IndexByte(lit, '.')
	if dot < 0 {
		n, err := strconv.ParseInt(lit, 10, 64)
		if err != nil {
			return nil
		}
		out := []string{strconv.FormatInt(n+1, 10)}
		if n > 0 {
			out = append(out, strconv.FormatInt(n-1, 10))
		}
		return out
	}
	decimals := len(lit) - dot - 1
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return nil
	}
	unit := 1.0
	for range decimals {
		unit /= 10
	}
	out := []string{strconv.FormatFloat(f+unit, 'f', decimals, 64)}
	if f-unit >= 0 {
		out = append(out, strconv.FormatFloat(f-unit, 'f', decimals, 64))
	}
	return out
}

// sqlMutants lists every mutant of one view file.
func sqlMutants(file, sql string) []sqlMutant {
	toks := lexSQL(sql)
	var out []sqlMutant
	add := func(from, to int, repl string) {
		line := 1 + strings.Count(sql[:from], "\n")
		ls := strings.LastIndexByte(sql[:from], '\n') + 1
		le := strings.IndexByte(sql[from:], '\n')
		if le < 0 {
			le = len(sql) - from
		}
		orig := strings.Join(strings.Fields(sql[from:to]), " ")
		m := sqlMutant{file: file, line: line, desc: orig + " → " + repl,
			src: strings.Join(strings.Fields(sql[ls:from+le]), " "), sql: sql[:from] + repl + sql[to:], nth: 1}
		for _, o := range out {
			if o.src == m.src && o.desc == m.desc {
				m.nth++
			}
		}
		out = append(out, m)
	}
	upper := func(i int) string {
		if i < 0 || i >= len(toks) || toks[i].kind != 'w' {
			return ""
		}
		return strings.ToUpper(toks[i].text)
	}
	for i, tk := range toks {
		switch tk.kind {
		case 'o':
			for _, r := range comparisonMutants[tk.text] {
				add(tk.start, tk.end, r)
			}
		case 'n':
			// Parts of a TIMESTAMP literal are strings; a number glued to a word is a name.
			for _, r := range numberMutants(tk.text) {
				add(tk.start, tk.end, r)
			}
		case 'w':
			next := i+1 < len(toks) && toks[i+1].text == "("
			if r, ok := aggregateMutants[strings.ToLower(tk.text)]; ok && next {
				add(tk.start, tk.end, r)
			}
			if strings.EqualFold(tk.text, "count") && next && upper(i+2) == "DISTINCT" {
				add(toks[i+2].start, toks[i+3].start, "")
			}
			if upper(i) == "NOT" && upper(i-1) != "IS" && upper(i+1) != "IN" {
				add(tk.start, toks[i+1].start, "")
			}
			if upper(i) == "NOT" && upper(i-1) == "IS" {
				add(toks[i-1].end, tk.end, "")
			}
			if upper(i) == "NULL" && upper(i-1) == "IS" {
				add(tk.start, tk.start, "NOT ")
			}
			if conditionStarts[upper(i)] {
				out = append(out, termMutants(sql, toks, i, add)...)
			}
		}
	}
	return out
}

// termMutants drops each term of the condition that starts after toks[at]: AND'ed terms
// become TRUE, OR'ed terms (when the condition's top level is an OR) FALSE. A single term
// becomes TRUE (the whole condition dropped).
func termMutants(sql string, toks []sqlToken, at int, add func(from, to int, repl string)) []sqlMutant {
	d := toks[at].depth
	end := at + 1
	for ; end < len(toks); end++ {
		tk := toks[end]
		if tk.depth < d || tk.depth == d && (tk.text == "," || tk.text == ";" || tk.kind == 'w' && conditionEnds[strings.ToUpper(tk.text)]) {
			break
		}
	}
	split := func(sep string) [][2]int {
		var terms [][2]int
		from, between := at+1, false
		for k := at + 1; k < end; k++ {
			tk := toks[k]
			if tk.depth != d || tk.kind != 'w' {
				continue
			}
			switch w := strings.ToUpper(tk.text); {
			case w == "BETWEEN":
				between = true
			case w == sep && w == "AND" && between:
				between = false
			case w == sep:
				terms = append(terms, [2]int{from, k})
				from = k + 1
			}
		}
		return append(terms, [2]int{from, end})
	}
	terms, repl := split("OR"), "FALSE"
	if len(terms) == 1 {
		terms, repl = split("AND"), "TRUE"
	}
	for _, t := range terms {
		if t[0] >= t[1] {
			continue
		}
		add(toks[t[0]].start, toks[t[1]-1].end, repl)
	}
	return nil
}
