package scenarios

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestKeyLineIndexes: a key with an index names that element of a sequence, and the keys
// below it; an index past the end, or into something that is not a sequence, stops at the
// deepest written ancestor.
func TestKeyLineIndexes(t *testing.T) {
	src := "name: k\nfaults:\n  - {id: a, kind: outage}\n  - id: b\n    kind: hang\ntools: {x: {}}\n"
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key       string
		line, col int
	}{
		{"faults", 2, 1},
		{"faults[0]", 3, 5},
		{"faults[0].kind", 3, 13},
		{"faults[1].kind", 5, 5},
		{"faults[2].kind", 2, 1},
		{"tools[0].x", 6, 1},
		{"name", 1, 1},
	} {
		if l, col := keyLine(&root, c.key); l != c.line || col != c.col {
			t.Errorf("%s: %d:%d, want %d:%d", c.key, l, col, c.line, c.col)
		}
	}
}

// TestSecretWords: text holds a secret-looking word when one of its words (runs of ASCII
// letters, digits, '_' and '-') names a secret, in either case; a pattern is matched inside
// one word only, never across a separator.
func TestSecretWords(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"{password: x}", true},
		{"{AUTHORIZATION: x}", true},
		{"{authorization: x}", true},
		{"--set tools.a.arguments.credential=x", true},
		{"{name: x, steps: 3}", false},
		{"pass word", false},
		{"tok.en", false},
		{"", false},
	} {
		if got := secretWords(c.text); got != c.want {
			t.Errorf("secretWords(%q) = %t", c.text, got)
		}
	}
}

// An item without a position (an override's value, whose lines are cleared) takes the line
// of its deepest written ancestor, not line 0.
func TestKeyLineUnwrittenItem(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("name: k\nfaults:\n  - {id: a, kind: outage}\n"), &root); err != nil {
		t.Fatal(err)
	}
	faults := root.Content[0].Content[3]
	faults.Content = append(faults.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "kind"}, {Kind: yaml.ScalarNode, Value: "hang"}}})
	for _, key := range []string{"faults[1]", "faults[1].kind"} {
		if l, col := keyLine(&root, key); l != 2 || col != 1 {
			t.Errorf("%s: %d:%d, want 2:1 (faults)", key, l, col)
		}
	}
}
