package scenarios

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestMarkDepth: an override's value is marked as its own down to 64 levels below the
// value and no deeper (the bound keeps a pathological value from costing unbounded work);
// a value already marked is not marked again, so a node reached twice keeps the first
// label.
func TestMarkDepth(t *testing.T) {
	nodes := make([]*yaml.Node, 70)
	for i := len(nodes) - 1; i >= 0; i-- {
		nodes[i] = &yaml.Node{Kind: yaml.SequenceNode, Line: 3, Column: 4}
		if i+1 < len(nodes) {
			nodes[i].Content = []*yaml.Node{nodes[i+1]}
		}
	}
	d := newDecoder("f.yaml")
	d.mark(nodes[0], "--set a=b", true, 0)
	for i, n := range nodes {
		marked := d.origin[n] == "--set a=b"
		if want := i <= 64; marked != want || (n.Line == 0) != want {
			t.Errorf("depth %d: marked %t, line %d; want marked %t", i, marked, n.Line, want)
		}
	}
	d.mark(nodes[0], "--set c=d", false, 0)
	if d.origin[nodes[1]] != "--set a=b" {
		t.Errorf("a marked node relabelled: %q", d.origin[nodes[1]])
	}
}
