package golang

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"
)

// maxLine is the length, in characters with a tab counting as one, past which a
// generated line that holds a list is broken into one item a line, as a person
// would break it for reading and for one-line diffs.
const maxLine = 100

// tooLong reports whether c, rendered lead characters after the margin, has a line
// past maxLine. lead counts the tabs of indentation and whatever else the line holds
// besides c: gofmt's alignment of keys, a trailing comma or brace.
func tooLong(lead int, c Code) bool { return lead+width(c) > maxLine }

// width is the length of the widest line of c as gofmt lays it out; c must render as
// an expression or a declaration.
func width(c Code) int {
	w := 0
	for _, l := range strings.Split(fmt.Sprintf("%#v", c), "\n") {
		w = max(w, len(l))
	}
	return w
}

// items lists between open and close, separated by commas: one a line when multi,
// with the trailing comma that makes gofmt keep them apart.
func items(multi bool, open, close string) Options {
	return Options{Open: open, Close: close, Separator: ",", Multi: multi}
}

// signature renders func name(params) results, the parameters one a line when the
// line with its opening brace would pass maxLine.
func signature(name string, params []Code, results ...Code) *Statement {
	multi := tooLong(len(" {"), Func().Id(name).Params(params...).Params(results...))
	return Func().Id(name).Custom(items(multi, "(", ")"), params...).Params(results...)
}
