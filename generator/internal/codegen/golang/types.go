package golang

import (
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"

	"github.com/jobc-dev/jobc/generator/internal/gotype"
)

// goType renders a type expression.
func goType(t gotype.Type) *Statement {
	switch t := t.(type) {
	case gotype.Builtin:
		if t.Name == "any" {
			return Any()
		}
		return Id(t.Name)
	case gotype.Ref:
		if t.Import == "" {
			return Id(t.Name)
		}
		return Qual(t.Import, t.Name)
	case gotype.Pointer:
		return Op("*").Add(goType(t.Elem))
	case gotype.Slice:
		return Index().Add(goType(t.Elem))
	case gotype.Map:
		return Map(String()).Add(goType(t.Elem))
	}
	panic(fmt.Sprintf("emit: unknown type %T", t))
}

// decls renders the named types a payload version declares.
// filledPayload and filledResult say, in a defaulted field's doc, who fills the
// default in: decls takes one.
const (
	filledPayload = "workers fill it in when the payload leaves the field out"
	filledResult  = "readers fill it in when the stored result leaves the field out"
)

func decls(f *File, p *gotype.Payload, rootDoc, filled string) {
	for i, d := range p.Decls {
		doc := joinDoc(fmt.Sprintf("%s is the type of %s in %s.", d.Name, d.Of, andList(append([]string{p.Root}, d.SharedBy...))), d.Doc)
		if i == 0 {
			doc = joinDoc(rootDoc, d.Doc)
		}
		switch {
		case d.Struct != nil:
			comment(f, d.Name, doc, "")
			f.Type().Id(d.Name).Struct(fields(d.Struct.Fields, filled)...)
		case d.Enum != nil:
			comment(f, d.Name, doc, "")
			f.Type().Id(d.Name).Add(goType(d.Enum.Base))
			f.Comment("Values of " + d.Name + ".")
			f.Const().DefsFunc(func(g *Group) {
				for _, v := range d.Enum.Values {
					g.Id(v.Name).Id(d.Name).Op("=").Lit(v.Value)
				}
			})
		}
	}
}

func fields(fs []gotype.Field, filled string) []Code {
	out := make([]Code, 0, len(fs))
	for _, f := range fs {
		tag := f.JSON
		if f.OmitEmpty {
			// omitzero drops a nil slice or map but keeps an empty one: [] and {} are
			// values the producer chose, not absent fields for defaults to fill.
			switch f.Type.(type) {
			case gotype.Slice, gotype.Map:
				tag += ",omitzero"
			default:
				tag += ",omitempty"
			}
		}
		st := Id(f.Name).Add(goType(f.Type)).Tag(map[string]string{"json": tag})
		doc := f.Doc
		if f.HasConst {
			doc = joinDoc(doc, "Always "+jsonText(f.Const)+".")
		}
		if f.HasDefault {
			doc = joinDoc(doc, "Default: "+jsonText(f.Default)+"; "+filled+".")
		}
		out = append(out, docLines(doc)...)
		out = append(out, st)
	}
	return out
}

// andList joins items as prose: "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func joinDoc(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// comment writes a doc comment that starts with name, as Go doc conventions ask.
func comment(f *File, name, doc, fallback string) {
	doc = strings.TrimSpace(doc)
	if doc == "" {
		doc = fallback
	}
	if doc == "" {
		return
	}
	if !strings.HasPrefix(doc, name+" ") {
		doc = name + ": " + doc
	}
	writeDoc(f, doc)
}

// writeDoc writes text as // comment lines, wrapped, before the next declaration.
func writeDoc(f *File, text string) {
	for _, c := range docLines(text) {
		f.Add(c)
	}
}

// docLines renders text as // comment lines, wrapped at about 80 columns.
func docLines(text string) []Code {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var out []Code
	for _, l := range Wrap(text, 80) {
		out = append(out, Comment(l))
	}
	return out
}

// ordered renders a composite literal's elements one per line, in the given order.
func ordered(elems ...Code) *Statement {
	return Custom(Options{Open: "{", Close: "}", Separator: ",", Multi: true}, elems...)
}

// kv is one key: value element of a composite literal.
func kv(key string, value Code) Code { return Id(key).Op(":").Add(value) }

// Wrap folds text at width columns, keeping its paragraph breaks (blank lines): the
// doc comments of the Go and the TypeScript files alike.
func Wrap(text string, width int) []string {
	var out []string
	for i, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if i > 0 {
			out = append(out, "")
		}
		line := ""
		for _, word := range strings.Fields(para) {
			if line != "" && len(line)+1+len(word) > width {
				out = append(out, line)
				line = word
				continue
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}
