package sql

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"
)

// JSON Schema patterns are matched by Go's regexp (RE2 syntax) in the runtime, and by
// PostgreSQL's regular expressions (Henry Spencer's ARE, "~") here. The two read
// some of the same text differently: "." matches a newline in ARE and not in Go;
// \d, \w, \s and [[:alpha:]] follow the database's locale in ARE and are ASCII in Go;
// \b is a word boundary in Go and a backspace in ARE; ARE bounds repetition counts
// at 255, Go at 1000. So a pattern is not copied: it is parsed with Go's own parser
// and written out again in ARE, each construct in a form both read alike (classes as
// explicit ranges, "." as [^\n]). What has no such form — word boundaries, multi-line
// or case-insensitive flags, counts above 255 — is refused with a diagnostic.

// pattern translates a JSON Schema pattern for ARE, at the schema pointer at.
func (fn *function) pattern(pat, at string) (string, bool) {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		fn.errorf(at, "pattern %s: %v", goQuote(pat), err)
		return "", false
	}
	var b strings.Builder
	if err := writeARE(&b, re); err != nil {
		fn.errorf(at, "pattern %s cannot be checked by a SQL producer as Go checks it: %v", goQuote(pat), err)
		return "", false
	}
	return b.String(), true
}

// maxARERepeat is the largest {n,m} count PostgreSQL's regular expressions accept.
const maxARERepeat = 255

func writeARE(b *strings.Builder, re *syntax.Regexp) error {
	if re.Flags&syntax.FoldCase != 0 && (re.Op == syntax.OpLiteral) {
		return fmt.Errorf("case-insensitive matching ((?i)) is not translated")
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return fmt.Errorf("it matches nothing")
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			writeRune(b, r, false)
		}
	case syntax.OpCharClass:
		writeClass(b, re.Rune)
	case syntax.OpAnyCharNotNL:
		b.WriteString(`[^\n]`)
	case syntax.OpAnyChar:
		b.WriteString(`(?:.|\n)`)
	case syntax.OpBeginText:
		b.WriteString("^")
	case syntax.OpEndText:
		b.WriteString("$")
	case syntax.OpBeginLine, syntax.OpEndLine:
		return fmt.Errorf("multi-line anchors ((?m)^ and $) are not translated")
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return fmt.Errorf(`word boundaries (\b, \B) differ: ARE's \y follows the locale`)
	case syntax.OpCapture:
		b.WriteString("(")
		if err := writeARE(b, re.Sub[0]); err != nil {
			return err
		}
		b.WriteString(")")
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		if err := writeAtom(b, re.Sub[0]); err != nil {
			return err
		}
		// Greediness changes which text matches, never whether some does.
		b.WriteString(map[syntax.Op]string{syntax.OpStar: "*", syntax.OpPlus: "+", syntax.OpQuest: "?"}[re.Op])
	case syntax.OpRepeat:
		if re.Min > maxARERepeat || re.Max > maxARERepeat {
			return fmt.Errorf("repetition counts above %d are refused by PostgreSQL", maxARERepeat)
		}
		if err := writeAtom(b, re.Sub[0]); err != nil {
			return err
		}
		switch {
		case re.Max == -1:
			fmt.Fprintf(b, "{%d,}", re.Min)
		case re.Min == re.Max:
			fmt.Fprintf(b, "{%d}", re.Min)
		default:
			fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if s.Op == syntax.OpAlternate {
				b.WriteString("(?:")
				if err := writeARE(b, s); err != nil {
					return err
				}
				b.WriteString(")")
				continue
			}
			if err := writeARE(b, s); err != nil {
				return err
			}
		}
	case syntax.OpAlternate:
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			if err := writeARE(b, s); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("construct %v is not translated", re.Op)
	}
	return nil
}

// writeAtom writes re so that a following quantifier applies to all of it.
func writeAtom(b *strings.Builder, re *syntax.Regexp) error {
	switch {
	case re.Op == syntax.OpLiteral && len(re.Rune) == 1, re.Op == syntax.OpCharClass,
		re.Op == syntax.OpAnyCharNotNL, re.Op == syntax.OpCapture:
		return writeARE(b, re)
	}
	b.WriteString("(?:")
	if err := writeARE(b, re); err != nil {
		return err
	}
	b.WriteString(")")
	return nil
}

// writeClass writes the ranges of a class (pairs lo, hi) as a bracket expression; a
// class that reaches both ends of Unicode is written as the negation of the rest.
func writeClass(b *strings.Builder, ranges []rune) {
	if len(ranges) >= 2 && ranges[0] == 0 && ranges[len(ranges)-1] == unicode.MaxRune {
		var rest []rune
		for i := 1; i+1 < len(ranges); i += 2 {
			rest = append(rest, ranges[i]+1, ranges[i+1]-1)
		}
		if len(rest) == 0 {
			b.WriteString(`(?:.|\n)`)
			return
		}
		b.WriteString("[^")
		writeRanges(b, rest)
		b.WriteString("]")
		return
	}
	b.WriteString("[")
	writeRanges(b, ranges)
	b.WriteString("]")
}

func writeRanges(b *strings.Builder, ranges []rune) {
	for i := 0; i+1 < len(ranges); i += 2 {
		writeRune(b, ranges[i], true)
		if ranges[i+1] != ranges[i] {
			b.WriteString("-")
			writeRune(b, ranges[i+1], true)
		}
	}
}

// writeRune writes one character: letters and digits as they are, other printable
// ASCII escaped with a backslash (a literal in ARE, in brackets too), anything else
// as \uXXXX or \UXXXXXXXX.
func writeRune(b *strings.Builder, r rune, inClass bool) {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		b.WriteRune(r)
	case r == ' ' && !inClass:
		b.WriteRune(r)
	case r > ' ' && r < 0x7f || r == ' ':
		b.WriteByte('\\')
		b.WriteRune(r)
	case r > 0xffff:
		fmt.Fprintf(b, `\U%08x`, r)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}
