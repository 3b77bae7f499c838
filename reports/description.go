package reports

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// maxOverridesShown bounds the overridden values a header lists; the rest are counted.
const maxOverridesShown = 4

// honestDescription is the description a report shows for a run of scenario name whose
// stored configuration is config (runs.config, JSON): desc itself, unless it is the
// description of the embedded example of that name and the run's configuration differs from
// the example's. A description such as "10,000 research investigations ..." was written for
// the example's values; after `--set workload.investigations=300` it would lie, so the report
// says what differs: "… (description as written; overridden: workload.investigations=300)".
// The values come from the stored configuration, which the trace writer has redacted. A
// scenario of the user's own file is shown as it is: the file is not in the database.
func honestDescription(name, desc, config string) string {
	if desc == "" || config == "" {
		return desc
	}
	data, ok := scenarios.Embedded(name)
	if !ok {
		return desc
	}
	example, err := scenarios.Parse("embedded:"+name, data, nil)
	if err != nil || example.Description != desc {
		return desc
	}
	diffs, err := configDiff(example.JSON(), []byte(config))
	if err != nil || len(diffs) == 0 {
		return desc
	}
	shown := diffs[:min(len(diffs), maxOverridesShown)]
	more := ""
	if n := len(diffs) - len(shown); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("%s (description as written; overridden: %s%s)", desc, strings.Join(shown, ", "), more)
}

// redactedValue is a value the trace writer replaced by its keyed hash (a secret, such as a
// tool argument named api_key): the stored configuration hides it, so whether the run
// changed it cannot be told, and the report does not claim it did.
var redactedValue = regexp.MustCompile(`^redacted:hmac-sha256:[0-9a-f]{16}$`)

// configDiff lists the leaves where config differs from example, as path=value (the value
// in config; "(none)" where config has none), in path order; redacted values are left out.
func configDiff(example, config []byte) ([]string, error) {
	var a, b any
	if err := json.Unmarshal(example, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(config, &b); err != nil {
		return nil, err
	}
	was, now := map[string]string{}, map[string]string{}
	t := reflect.TypeFor[scenarios.Scenario]()
	flatten("", a, t, was)
	flatten("", b, t, now)
	var out []string
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range now {
			if !yield(p) {
				return
			}
		}
		for p := range was {
			if _, ok := now[p]; !ok && !yield(p) {
				return
			}
		}
	}) {
		v, ok := now[p]
		if !ok {
			v = "(none)"
		}
		if redactedValue.MatchString(v) {
			continue
		}
		if v != was[p] || !ok {
			out = append(out, p+"="+v)
		}
	}
	return out, nil
}

// flatten adds every leaf of v under path to leaves: objects by key (a.b), lists by index
// (a[2]) or, for entries with a name, by name (tools.search, as the file writes them), strings unquoted, durations as written in a scenario (2h, 90s; JSON holds
// nanoseconds), other values as JSON. t is the Go type v was encoded from, nil when unknown.
func flatten(path string, v any, t reflect.Type, leaves map[string]string) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, c, fieldType(t, k), leaves)
		}
	case []any:
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i, c := range x {
			// A list of named entries (tools) is a mapping by name in the file: tools.search.
			if m, ok := c.(map[string]any); ok {
				if name, ok := m["name"].(string); ok && name != "" {
					named := maps.Clone(m)
					delete(named, "name")
					flatten(path+"."+name, named, elem, leaves)
					continue
				}
			}
			flatten(fmt.Sprintf("%s[%d]", path, i), c, elem, leaves)
		}
	case string:
		leaves[path] = x
	case float64:
		if t == reflect.TypeFor[time.Duration]() {
			leaves[path] = shortDuration(time.Duration(x))
			return
		}
		leaves[path] = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		leaves[path] = string(b)
	}
}

// fieldType is the type of the field of struct t (or the values of map t) that JSON names
// key; nil when there is none.
func fieldType(t reflect.Type, key string) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		return t.Elem()
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == key || name == "" && f.Name == key {
				return f.Type
			}
			if f.Anonymous && f.Tag.Get("json") == "" {
				if ft := fieldType(f.Type, key); ft != nil {
					return ft
				}
			}
		}
	}
	return nil
}

// shortDuration writes d without the zero units Go's String adds: 2h, 1h30m, 90s → 1m30s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
