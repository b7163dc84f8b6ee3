package contract

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/spec"
)

// Pointer returns where the JSON pointer ptr (RFC 6901, "" for the whole schema) into
// the value of s is written: the file, line and column, and the dotted path used in
// diagnostics. A member is located at its key, an array element at the element. When
// the pointer names something the schema does not have (a removed property), the
// nearest existing ancestor is returned.
//
// Schemas that a $ref took from another file are inlined under the root's $defs (see
// spec.Schema); a pointer into one of them is located in that file.
func Pointer(s *spec.Schema, ptr string) (spec.Pos, string) {
	n := deref(s.Node)
	file, path := s.File, s.Path
	pos := spec.Pos{File: file}
	if n != nil {
		pos.Line, pos.Col = n.Line, n.Column
	}
	if ptr == "" || !strings.HasPrefix(ptr, "/") {
		return pos, path
	}
	for i, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapeToken(tok)
		if n == nil {
			break
		}
		var at, next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == tok {
					at, next = n.Content[j], n.Content[j+1]
					break
				}
			}
		case yaml.SequenceNode:
			if k, err := strconv.Atoi(tok); err == nil && k >= 0 && k < len(n.Content) && strconv.Itoa(k) == tok {
				at = deref(n.Content[k])
				next = at
			}
		}
		if next == nil {
			break
		}
		if src, ok := s.Inlined[tok]; ok && i == 1 && strings.HasPrefix(ptr, "/$defs/") {
			file, path = src.File, src.Path
		} else {
			path = joinPath(path, tok)
		}
		pos = spec.Pos{File: file, Line: at.Line, Col: at.Column}
		n = deref(next)
	}
	return pos, path
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func unescapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

func escapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func joinPath(p, key string) string {
	if p == "" {
		return key
	}
	return p + "." + key
}
