package spec

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// node is a YAML node with the file it came from and its dotted path in the spec.
type node struct {
	*yaml.Node
	file string
	path string
}

func (n node) pos() Pos { return Pos{File: n.file, Line: n.Line, Col: n.Column} }

// at returns the child node v under key.
func (n node) at(key string, v *yaml.Node) node {
	p := key
	if n.path != "" {
		p = n.path + "." + key
	}
	return node{Node: resolveAlias(v), file: n.file, path: p}
}

func resolveAlias(v *yaml.Node) *yaml.Node {
	for v != nil && v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	return v
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!int", "!!float", "!!bool":
			return n.Value // unquoted, so that 1 and "1" read differently
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

// field handles one known key of a mapping.
type field func(v node)

// mapping calls the handler of every key of n, and reports keys it does not know
// (suggesting the closest known one), duplicate keys, and a non-mapping n. It returns
// the set of keys present.
func (l *loader) mapping(n node, fields map[string]field) map[string]node {
	if n.Kind != yaml.MappingNode {
		l.d.add(n.pos(), n.path, "want a mapping, got %s", kindName(n.Node))
		return nil
	}
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	sort.Strings(known)
	seen := map[string]node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		child := n.at(key, v)
		keyNode := node{Node: k, file: n.file, path: child.path}
		if _, dup := seen[key]; dup {
			l.d.add(keyNode.pos(), child.path, "duplicate key %q", key)
			continue
		}
		seen[key] = child
		f, ok := fields[key]
		if !ok {
			if s := Suggest(key, known); s != "" {
				l.d.add(keyNode.pos(), n.path, "unknown key %q; did you mean %q?", key, s)
			} else {
				l.d.add(keyNode.pos(), n.path, "unknown key %q (known keys: %s)", key, strings.Join(known, ", "))
			}
			continue
		}
		f(child)
	}
	return seen
}

// entries iterates a mapping whose keys are names chosen by the user (jobs, classes,
// versions), in file order.
func (l *loader) entries(n node, each func(key node, v node)) {
	if n.Kind != yaml.MappingNode {
		l.d.add(n.pos(), n.path, "want a mapping, got %s", kindName(n.Node))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		child := n.at(k.Value, v)
		keyNode := node{Node: k, file: n.file, path: child.path}
		if seen[k.Value] {
			l.d.add(keyNode.pos(), child.path, "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		each(keyNode, child)
	}
}

func (l *loader) scalar(n node, want string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.d.add(n.pos(), n.path, "want %s, got %s", want, kindName(n.Node))
		return false
	}
	return true
}

func (l *loader) str(n node) (string, bool) {
	if !l.scalar(n, "a string") {
		return "", false
	}
	if n.Tag != "!!str" {
		l.d.add(n.pos(), n.path, "want a string, got %s", kindName(n.Node))
		return "", false
	}
	return n.Value, true
}

func (l *loader) integer(n node) (int, bool) {
	if !l.scalar(n, "an integer") {
		return 0, false
	}
	i, err := strconv.ParseInt(n.Value, 0, 32)
	if n.Tag != "!!int" || err != nil {
		l.d.add(n.pos(), n.path, "want an integer, got %s", kindName(n.Node))
		return 0, false
	}
	return int(i), true
}

func (l *loader) number(n node) (float64, bool) {
	if !l.scalar(n, "a number") {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if (n.Tag != "!!int" && n.Tag != "!!float") || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		l.d.add(n.pos(), n.path, "want a number, got %s", kindName(n.Node))
		return 0, false
	}
	return f, true
}

func (l *loader) boolean(n node) (bool, bool) {
	if !l.scalar(n, "true or false") {
		return false, false
	}
	if n.Tag != "!!bool" {
		l.d.add(n.pos(), n.path, "want true or false, got %s", kindName(n.Node))
		return false, false
	}
	return n.Value == "true", true
}

// duration parses Go durations ("90s", "2m", "1h30m") and whole days ("7d").
func (l *loader) duration(n node) (time.Duration, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		l.d.add(n.pos(), n.path, "want a duration with a unit, such as 30s, 5m, 2h or 7d, got %s", n.Value)
		return 0, false
	}
	s, ok := l.str(n)
	if !ok {
		return 0, false
	}
	d, err := parseDuration(s)
	if err != nil || d <= 0 {
		l.d.add(n.pos(), n.path, "want a positive duration such as 30s, 5m, 2h or 7d, got %q", s)
		return 0, false
	}
	return d, true
}

func parseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, err
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// formatDuration writes d as the spec would: 7d, 2h, 1h30m, 90s, 250ms.
func formatDuration(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (l *loader) strings(n node) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		l.d.add(n.pos(), n.path, "want a list of strings, got %s", kindName(n.Node))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		s, good := l.str(n.at(strconv.Itoa(i), c))
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// toJSON converts a YAML value to the value encoding/json would decode from the same
// document: map[string]any, []any, string, float64, int64, bool or nil.
func (l *loader) toJSON(n node) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			v, good := l.toJSON(n.at(k, n.Content[i+1]))
			ok = ok && good
			m[k] = v
		}
		return m, ok
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, good := l.toJSON(n.at(strconv.Itoa(i), c))
			ok = ok && good
			s = append(s, v)
		}
		return s, ok
	case yaml.ScalarNode:
		v, ok := scalarJSON(n.Node)
		if !ok {
			l.d.add(n.pos(), n.path, "unsupported value %q (YAML tag %s): write it as a string, number, boolean or null", n.Value, n.Tag)
		}
		return v, ok
	}
	l.d.add(n.pos(), n.path, "unsupported YAML value")
	return nil, false
}

func scalarJSON(n *yaml.Node) (any, bool) {
	switch n.Tag {
	case "!!null":
		return nil, true
	case "!!bool":
		return n.Value == "true", true
	case "!!int":
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			return nil, false
		}
		return i, true
	case "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		return f, true
	case "!!str", "!!timestamp": // an unquoted date is a string in JSON
		return n.Value, true
	}
	return nil, false
}
