// Package scenariotest rewrites scenario files for tests of the relations every scenario
// must satisfy (docs/metrics.md, metamorphic relations): the same scenario with its
// mappings in another order, with a field changed, or with something added that nothing
// uses. It works on the YAML tree, so what it produces is a file a user could write.
package scenariotest

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Edit parses data, lets fn change its root mapping, and returns the file again.
func Edit(data []byte, fn func(root *yaml.Node) error) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("scenariotest: the file's root is not a mapping")
	}
	if err := fn(doc.Content[0]); err != nil {
		return nil, err
	}
	return yaml.Marshal(&doc)
}

// Reverse returns data with the keys of every mapping, at every depth, in reverse order.
func Reverse(data []byte) ([]byte, error) {
	return Edit(data, func(root *yaml.Node) error {
		permute(root, func(n int) []int {
			p := make([]int, n)
			for i := range p {
				p[i] = n - 1 - i
			}
			return p
		})
		return nil
	})
}

// Shuffle returns data with the keys of every mapping, at every depth, in an order drawn
// from seed.
func Shuffle(data []byte, seed uint64) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, 0x5ce7a510))
	return Edit(data, func(root *yaml.Node) error {
		permute(root, r.Perm)
		return nil
	})
}

// permute reorders the key/value pairs of every mapping under n by perm(pairs).
func permute(n *yaml.Node, perm func(int) []int) {
	for _, c := range n.Content {
		permute(c, perm)
	}
	if n.Kind != yaml.MappingNode || len(n.Content) < 4 {
		return
	}
	pairs := len(n.Content) / 2
	old := slices.Clone(n.Content)
	for i, j := range perm(pairs) {
		n.Content[2*i], n.Content[2*i+1] = old[2*j], old[2*j+1]
	}
}

// Mappings counts the mappings of two or more keys in data: those a reordering changes.
func Mappings(data []byte) (int, error) {
	count := 0
	_, err := Edit(data, func(root *yaml.Node) error {
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.MappingNode && len(n.Content) >= 4 {
				count++
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(root)
		return nil
	})
	return count, err
}

// Get returns the value under key in mapping n, or nil.
func Get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Set sets key in mapping n to the YAML value text (a new key goes last).
func Set(n *yaml.Node, key, value string) error {
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return err
	}
	if len(v.Content) != 1 {
		return fmt.Errorf("scenariotest: %q is not one YAML value", value)
	}
	val := v.Content[0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = val
			return nil
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, val)
	return nil
}
