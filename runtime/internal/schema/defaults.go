package schema

// FillDefaults sets, in a decoded document, every absent property whose schema has a
// default, in nested objects and array items too, and reports whether it set any.
// Defaults are not filled inside a value that was itself filled in: a default is
// written as the schema says.
func (s *Schema) FillDefaults(doc any) bool {
	if !s.defaults {
		return false
	}
	return fill(doc, s.root)
}

func fill(x any, n *node) bool {
	for n != nil && n.ref != nil {
		n = n.ref
	}
	if n == nil {
		return false
	}
	changed := false
	switch x := x.(type) {
	case map[string]any:
		for _, name := range n.names {
			ps := n.properties[name]
			cur, ok := x[name]
			if !ok {
				if d, ok := defaultOf(ps); ok {
					x[name] = clone(d)
					changed = true
				}
				continue
			}
			changed = fill(cur, ps) || changed
		}
		if n.additional != nil && n.additional.boolean == nil {
			for name, cur := range x {
				if _, known := n.properties[name]; !known {
					changed = fill(cur, n.additional) || changed
				}
			}
		}
	case []any:
		if n.items != nil {
			for _, e := range x {
				changed = fill(e, n.items) || changed
			}
		}
	}
	return changed
}

// defaultOf is a property's default, looked up through references.
func defaultOf(n *node) (any, bool) {
	for n != nil && !n.hasDefault && n.ref != nil {
		n = n.ref
	}
	if n == nil || !n.hasDefault {
		return nil, false
	}
	return n.defaultValue, true
}

// clone copies a default, so that filling it into documents never shares it.
func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = clone(e)
		}
		return l
	}
	return v
}
