package scenarios

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// aliasChain is n alias nodes, each naming the next, the last naming a scalar.
func aliasChain(n int) (*yaml.Node, *yaml.Node) {
	end := &yaml.Node{Kind: yaml.ScalarNode, Value: "x"}
	head := end
	for range n {
		head = &yaml.Node{Kind: yaml.AliasNode, Alias: head}
	}
	return head, end
}

// TestDerefBound: deref follows at most 64 aliases; a longer chain, or one that loops
// (which the YAML parser refuses, but a node built in code can hold), counts as absent
// instead of running forever.
func TestDerefBound(t *testing.T) {
	for _, n := range []int{0, 1, 64} {
		if head, end := aliasChain(n); deref(head) != end {
			t.Errorf("a chain of %d aliases: not followed to its end", n)
		}
	}
	if head, _ := aliasChain(65); deref(head) != nil {
		t.Error("a chain of 65 aliases was followed")
	}
	loop := &yaml.Node{Kind: yaml.AliasNode}
	loop.Alias = loop
	if deref(loop) != nil {
		t.Error("an alias to itself was not absent")
	}
	if deref(nil) != nil {
		t.Error("deref(nil) != nil")
	}
}
