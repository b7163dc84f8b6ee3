package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// maxJSONDepth bounds the nesting of a JSON schema file.
const maxJSONDepth = 1000

// parseJSON parses a JSON document into a yaml.Node tree with the line and column of
// every value, so that JSON schema files get the same diagnostics as YAML ones. (The
// YAML parser does not accept every JSON document: it rejects the escape \/, for one.)
// On error it returns the position of the problem.
func parseJSON(b []byte) (*yaml.Node, Pos, error) {
	p := &jsonParser{src: b, dec: json.NewDecoder(bytes.NewReader(b))}
	// Check the document first: json.Unmarshal reports syntax errors at an absolute
	// offset (a Decoder's Token does not).
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		off, msg := len(b), err.Error()
		if errors.As(err, &se) {
			off, msg = int(se.Offset)-1, se.Error()
		}
		if len(bytes.TrimSpace(b)) == 0 {
			off, msg = 0, "the file is empty"
		}
		line, col := p.lineCol(off)
		return nil, Pos{Line: line, Col: col}, errors.New(strings.TrimPrefix(msg, "json: "))
	}
	p.dec.UseNumber()
	n, err := p.value(0)
	if err != nil {
		line, col := p.lineCol(p.errAt)
		return nil, Pos{Line: line, Col: col}, err
	}
	return n, Pos{}, nil
}

type jsonParser struct {
	src   []byte
	dec   *json.Decoder
	errAt int
}

// start returns the offset where the next token begins.
func (p *jsonParser) start() int {
	off := int(p.dec.InputOffset())
	for off < len(p.src) && strings.IndexByte(" \t\r\n,:", p.src[off]) >= 0 {
		off++
	}
	return off
}

func (p *jsonParser) lineCol(off int) (int, int) {
	off = min(max(off, 0), len(p.src))
	before := p.src[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}

func (p *jsonParser) node(kind yaml.Kind, tag, value string, off int) *yaml.Node {
	line, col := p.lineCol(off)
	return &yaml.Node{Kind: kind, Tag: tag, Value: value, Line: line, Column: col}
}

func (p *jsonParser) value(depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		p.errAt = p.start()
		return nil, fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	off := p.start()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := p.node(yaml.MappingNode, "!!map", "", off)
			for p.dec.More() {
				koff := p.start()
				k, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					p.errAt = koff
					return nil, errors.New("object keys must be strings")
				}
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, p.node(yaml.ScalarNode, "!!str", key, koff), v)
			}
			_, err := p.dec.Token()
			return n, err
		case '[':
			n := p.node(yaml.SequenceNode, "!!seq", "", off)
			for p.dec.More() {
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			_, err := p.dec.Token()
			return n, err
		}
		p.errAt = off
		return nil, fmt.Errorf("unexpected %q", rune(t))
	case string:
		return p.node(yaml.ScalarNode, "!!str", t, off), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return p.node(yaml.ScalarNode, tag, string(t), off), nil
	case bool:
		return p.node(yaml.ScalarNode, "!!bool", fmt.Sprint(t), off), nil
	case nil:
		return p.node(yaml.ScalarNode, "!!null", "null", off), nil
	}
	p.errAt = off
	return nil, fmt.Errorf("unexpected token %v", tok)
}
