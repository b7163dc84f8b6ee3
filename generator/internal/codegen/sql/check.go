package sql

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The checks are PL/pgSQL statements that append one pointer to f and one rule to m
// per problem, in the order the Go validator (runtime/internal/schema) finds them:
// the error raised sorts them by pointer, as Go does, so the two say the same.

// pointer is a JSON pointer being built, of literal tokens and SQL expressions. The
// validator does not escape its tokens ("/a/b" for a property "a/b"); nor does this.
type pointer []ptrPart

type ptrPart struct {
	text string // a literal part
	expr string // or a SQL text expression
}

func (p pointer) plus(token string) pointer {
	return append(append(pointer(nil), p...), ptrPart{text: "/" + token})
}

func (p pointer) plusExpr(expr string) pointer {
	return append(append(pointer(nil), p...), ptrPart{text: "/"}, ptrPart{expr: expr})
}

// sql renders the pointer, folding adjacent literals.
func (p pointer) sql() string {
	var parts []string
	var pending strings.Builder
	literal := false
	for _, part := range p {
		if part.expr == "" {
			pending.WriteString(part.text)
			literal = true
			continue
		}
		if literal {
			parts = append(parts, lit(pending.String()))
			pending.Reset()
			literal = false
		}
		parts = append(parts, part.expr)
	}
	if literal || len(parts) == 0 {
		parts = append(parts, lit(pending.String()))
	}
	return strings.Join(parts, " || ")
}

// checker writes the checks of one schema.
type checker struct {
	*function
	b      strings.Builder
	indent int
	depth  int // of loops, for their variables
}

func (c *checker) line(format string, args ...any) {
	c.b.WriteString(strings.Repeat("    ", c.indent))
	fmt.Fprintf(&c.b, format, args...)
	c.b.WriteByte('\n')
}

// problem appends one problem.
func (c *checker) problem(p pointer, msg string) {
	c.line("f := array_append(f, %s); m := array_append(m, %s);", p.sql(), msg)
}

// node writes the checks of the subschema s (at the schema pointer at) for the value
// v, a jsonb expression, at the payload pointer p.
func (c *checker) node(s any, at, v string, p pointer) {
	if b, ok := s.(bool); ok {
		if !b {
			c.problem(p, lit("not allowed"))
		}
		return
	}
	m, _ := s.(map[string]any)
	ts := types(m["type"])
	// A number Go's type for this place cannot hold exactly, whatever else is wrong
	// with it (runtime/internal/schema.Exact).
	if goType := numberType(ts); goType != "" {
		c.line("fe := jobc_exact_number(%s, '%s');", v, goType)
		c.line("IF fe IS NOT NULL THEN")
		c.indent++
		c.line("xf := array_append(xf, %s); xm := array_append(xm, fe);", p.sql())
		c.indent--
		c.line("END IF;")
	}
	// A value of the wrong type, constant, enum or format gets that one problem only.
	var chain []string // conditions and their problem
	var msgs []string
	if len(ts) > 0 {
		chain = append(chain, typeMismatch(ts, v))
		msgs = append(msgs, "'got ' || jsonb_typeof("+v+") || "+lit(", want "+strings.Join(ts, " or ")))
	}
	if k, ok := m["const"]; ok {
		chain = append(chain, fmt.Sprintf("%s <> %s", v, jsonLit(k)))
		msgs = append(msgs, lit("value must be "+display(k)))
	}
	if e, ok := m["enum"].([]any); ok {
		vals := make([]string, len(e))
		for i, x := range e {
			vals[i] = jsonLit(x)
		}
		chain = append(chain, fmt.Sprintf("NOT %s = ANY (ARRAY[%s])", v, strings.Join(vals, ", ")))
		msgs = append(msgs, lit(enumMessage(e)))
	}
	if f, ok := m["format"].(string); ok {
		if fn, ok := c.format(f, at); ok {
			c.line("fe := %s(%s);", fn, v)
			chain = append(chain, "fe IS NOT NULL")
			msgs = append(msgs, fmt.Sprintf("jobc_go_quote(%s #>> '{}') || %s || fe", v, lit(" is not valid "+f+": ")))
		}
	}
	for i, cond := range chain {
		kw := "ELSIF"
		if i == 0 {
			kw = "IF"
		}
		c.line("%s %s THEN", kw, cond)
		c.indent++
		c.problem(p, msgs[i])
		c.indent--
	}
	if len(chain) > 0 {
		mark := c.b.Len()
		c.line("ELSE")
		c.indent++
		before := c.b.Len()
		c.body(m, at, v, p, ts)
		c.indent--
		if c.b.Len() == before { // nothing more to check: drop the ELSE
			c.rewind(mark)
		}
		c.line("END IF;")
		return
	}
	c.body(m, at, v, p, ts)
}

// body writes the checks that apply once the value has the right type: those of a
// $ref, then those of the value's JSON type.
func (c *checker) body(m map[string]any, at, v string, p pointer, ts []string) {
	if r, ok := m["$ref"].(string); ok {
		target, ptr := c.resolve(r)
		c.node(target, ptr, v, p)
	}
	only := jsonTypes(ts)
	c.object(m, at, v, p, only)
	c.array(m, at, v, p, only)
	c.string(m, at, v, p, only)
	c.number(m, v, p, only)
}

// numberType is the JSON Schema type of the Go number generated for a place of types
// ts: "number" (float64), "integer" (int64) or "" (none).
func numberType(ts []string) string {
	out := ""
	for _, t := range ts {
		switch t {
		case "number":
			return t
		case "integer":
			out = t
		}
	}
	return out
}

// jsonTypes are the jsonb_typeof names of the JSON Schema types ts (nil: any).
func jsonTypes(ts []string) map[string]bool {
	if len(ts) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, t := range ts {
		if t == "integer" {
			t = "number"
		}
		out[t] = true
	}
	return out
}

// typeMismatch is the condition that v has none of the types ts.
func typeMismatch(ts []string, v string) string {
	if len(ts) == 1 && ts[0] != "integer" {
		return fmt.Sprintf("jsonb_typeof(%s) <> %s", v, lit(ts[0]))
	}
	return "NOT " + typeTest(ts, v)
}

// typeTest is the condition that v has one of the types ts.
func typeTest(ts []string, v string) string {
	var plain []string
	integer, number := false, false
	for _, t := range ts {
		switch t {
		case "integer":
			integer = true
		case "number":
			number = true
			plain = append(plain, "'number'")
		default:
			plain = append(plain, lit(t))
		}
	}
	var alts []string
	if len(plain) > 0 {
		alts = append(alts, fmt.Sprintf("jsonb_typeof(%s) IN (%s)", v, strings.Join(plain, ", ")))
	}
	if integer && !number {
		// 1.0 and 1e2 are integers too.
		alts = append(alts, fmt.Sprintf("jsonb_typeof(%[1]s) = 'number' AND (%[1]s)::numeric = trunc((%[1]s)::numeric)", v))
	}
	return "(" + strings.Join(alts, " OR ") + ")"
}

// guarded writes what emit writes, inside IF jsonb_typeof(v) = typ, if it writes
// anything. The keywords of a type the value cannot have (only, from its type
// keyword, checked before; nil: any) are left out, and when it can have no other
// type, so is the IF.
func (c *checker) guarded(typ, v string, only map[string]bool, emit func()) {
	if only != nil && !only[typ] {
		return
	}
	if len(only) == 1 {
		emit()
		return
	}
	mark := c.b.Len()
	c.line("IF jsonb_typeof(%s) = '%s' THEN", v, typ)
	c.indent++
	before := c.b.Len()
	emit()
	c.indent--
	if c.b.Len() == before {
		c.rewind(mark)
		return
	}
	c.line("END IF;")
}

// rewind drops what was written after mark: an IF whose body came out empty.
func (c *checker) rewind(mark int) {
	s := c.b.String()[:mark]
	c.b.Reset()
	c.b.WriteString(s)
}

func count(m map[string]any, key string) (int, bool) {
	n, ok := m[key].(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil
}

func (c *checker) object(m map[string]any, at, v string, p pointer, only map[string]bool) {
	c.guarded("object", v, only, func() {
		for _, b := range []struct{ key, op string }{{"minProperties", "<"}, {"maxProperties", ">"}} {
			if n, ok := count(m, b.key); ok {
				size := fmt.Sprintf("(SELECT count(*) FROM jsonb_object_keys(%s))", v)
				c.line("IF %s %s %d THEN", size, b.op, n)
				c.indent++
				c.problem(p, fmt.Sprintf("'%s: got ' || %s || ', want %d'", b.key, size, n))
				c.indent--
				c.line("END IF;")
			}
		}
		var required []string
		for _, r := range asList(m["required"]) {
			if s, ok := r.(string); ok {
				required = append(required, s)
			}
		}
		if len(required) > 0 {
			// ?& tests them all at once; the shared function names the missing ones.
			c.line("IF NOT %s ?& %s THEN", v, textArray(required))
			c.indent++
			c.problem(p, fmt.Sprintf("jobc_missing_properties(%s, %s)", v, textArray(required)))
			c.indent--
			c.line("END IF;")
		}
		props, _ := m["properties"].(map[string]any)
		names := sortedKeys(props)
		for _, name := range names {
			sub := fmt.Sprintf("%s -> %s", v, lit(name))
			mark := c.b.Len()
			c.line("IF %s ? %s THEN", v, lit(name))
			c.indent++
			before := c.b.Len()
			c.node(props[name], at+"/properties/"+escape(name), sub, p.plus(name))
			c.indent--
			if c.b.Len() == before {
				c.rewind(mark)
				continue
			}
			c.line("END IF;")
		}
		add, ok := m["additionalProperties"]
		switch {
		case !ok || add == true:
		case add == false:
			// What is left without the declared properties is additional.
			c.line("IF (%s) - %s <> '{}'::jsonb THEN", v, textArray(names))
			c.indent++
			c.problem(p, fmt.Sprintf("jobc_additional_properties(%s, %s)", v, textArray(names)))
			c.indent--
			c.line("END IF;")
		default:
			c.depth++
			k, e := fmt.Sprintf("k%d", c.depth), fmt.Sprintf("e%d", c.depth)
			c.noteDepth(c.depth)
			c.line("FOR %s, %s IN SELECT t.key, t.value FROM jsonb_each(%s) t WHERE NOT t.key = ANY (%s) ORDER BY t.key COLLATE \"C\" LOOP", k, e, v, textArray(names))
			c.indent++
			c.node(add, at+"/additionalProperties", e, p.plusExpr(k))
			c.indent--
			c.line("END LOOP;")
			c.depth--
		}
	})
}

func (c *checker) array(m map[string]any, at, v string, p pointer, only map[string]bool) {
	c.guarded("array", v, only, func() {
		for _, b := range []struct{ key, op string }{{"minItems", "<"}, {"maxItems", ">"}} {
			if n, ok := count(m, b.key); ok {
				c.line("IF jsonb_array_length(%s) %s %d THEN", v, b.op, n)
				c.indent++
				c.problem(p, fmt.Sprintf("'%s: got ' || jsonb_array_length(%s) || ', want %d'", b.key, v, n))
				c.indent--
				c.line("END IF;")
			}
		}
		if u, _ := m["uniqueItems"].(bool); u {
			c.line("fe := CASE WHEN jsonb_array_length(%[1]s) > 1 THEN jobc_unique_items(%[1]s) END;", v)
			c.line("IF fe IS NOT NULL THEN")
			c.indent++
			c.problem(p, "fe")
			c.indent--
			c.line("END IF;")
		}
		if items, ok := m["items"]; ok && items != true {
			c.depth++
			i, e := fmt.Sprintf("i%d", c.depth), fmt.Sprintf("e%d", c.depth)
			c.noteDepth(c.depth)
			c.line("FOR %s, %s IN SELECT t.i - 1, t.e FROM jsonb_array_elements(%s) WITH ORDINALITY t(e, i) ORDER BY t.i LOOP", i, e, v)
			c.indent++
			c.node(items, at+"/items", e, p.plusExpr(i+"::text"))
			c.indent--
			c.line("END LOOP;")
			c.depth--
		}
	})
}

func (c *checker) string(m map[string]any, at, v string, p pointer, only map[string]bool) {
	c.guarded("string", v, only, func() {
		// JSON Schema counts characters (code points), as length() does in UTF-8.
		for _, b := range []struct{ key, op string }{{"minLength", "<"}, {"maxLength", ">"}} {
			if n, ok := count(m, b.key); ok {
				c.line("IF length(%s #>> '{}') %s %d THEN", v, b.op, n)
				c.indent++
				c.problem(p, fmt.Sprintf("'%s: got ' || length(%s #>> '{}') || ', want %d'", b.key, v, n))
				c.indent--
				c.line("END IF;")
			}
		}
		if pat, ok := m["pattern"].(string); ok {
			if are, ok := c.pattern(pat, at+"/pattern"); ok {
				c.line("IF (%s #>> '{}') !~ %s THEN", v, lit(are))
				c.indent++
				c.problem(p, fmt.Sprintf("jobc_go_quote(%s #>> '{}') || %s", v, lit(" does not match pattern "+goQuote(pat))))
				c.indent--
				c.line("END IF;")
			}
		}
	})
}

func (c *checker) number(m map[string]any, v string, p pointer, only map[string]bool) {
	bounds := []struct{ key, fails, want string }{
		{"minimum", "<", "want "},
		{"maximum", ">", "want "},
		{"exclusiveMinimum", "<=", "want more than "},
		{"exclusiveMaximum", ">=", "want less than "},
	}
	c.guarded("number", v, only, func() {
		for _, b := range bounds {
			n, ok := m[b.key].(json.Number)
			if !ok {
				continue
			}
			c.line("IF (%s)::numeric %s (%s) THEN", v, b.fails, n)
			c.indent++
			c.problem(p, fmt.Sprintf("'%s: got ' || (%s)::text || %s", b.key, v, lit(", "+b.want+string(n))))
			c.indent--
			c.line("END IF;")
		}
		if n, ok := m["multipleOf"].(json.Number); ok {
			c.line("IF mod((%s)::numeric, %s) <> 0 THEN", v, n)
			c.indent++
			c.problem(p, fmt.Sprintf("'multipleOf: got ' || (%s)::text || %s", v, lit(", want a multiple of "+string(n))))
			c.indent--
			c.line("END IF;")
		}
	})
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
