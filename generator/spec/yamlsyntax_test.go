package spec

import (
	"fmt"
	"strings"
	"testing"
)

// TestYAMLSyntaxErrorLine puts one syntax error at a known line of a spec and checks
// that the diagnostic points at that line (and the line's first token), not at the
// start of the mapping the parser could not finish, which may be many lines above.
func TestYAMLSyntaxErrorLine(t *testing.T) {
	// head is lines 1-15 of a valid spec; the properties mapping starts on line 10.
	head := strings.Join([]string{
		"version: 1",
		"package: jobs",
		"out: jobs",
		"jobs:",
		"  send_email:",
		"    payload:",
		"      versions:",
		"        1:",
		"          schema:",
		"            type: object",
		"            properties:",
		"              a: {type: string}",
		"              b: {type: string}",
		"              c: {type: string}",
		"              d: {type: string}",
	}, "\n") + "\n"
	tail := "              e: {type: string}\n              f: {type: string}\n"
	cases := []struct {
		name      string
		spec      string
		line, col int
		msg       string
	}{
		{"key indented one space too little", head + "             g: {type: string}\n" + tail, 16, 14,
			"invalid YAML: did not find expected key in the list or mapping that starts on line 10"},
		{"key indented one space too far", head + "               g: {type: string}\n" + tail, 16, 16,
			"invalid YAML: did not find expected key in the list or mapping that starts on line 12"},
		{"list item in a mapping", head + "              - g\n" + tail, 16, 15,
			"invalid YAML: did not find expected key in the list or mapping that starts on line 12"},
		{"unclosed flow list", head + "            required: [a, b\n" + "            additionalProperties: false\n", 16, 13,
			"invalid YAML: did not find expected ',' or ']' in the list or mapping that starts on this line"},
		{"mapping value in a plain scalar", head + "              g: type: string\n" + tail, 16, 15,
			"invalid YAML: mapping values are not allowed in this context"},
		{"tab indentation", head + "              g:\n\t\ttype: string\n" + tail, 17, 3,
			"invalid YAML: found character that cannot start any token"},
		{"unterminated quoted string", head + "              g: {type: \"string}\n" + tail, 16, 15,
			"invalid YAML: found unexpected end of stream"},
		{"error on the first line", "version: 1: 2\n" + head[len("version: 1\n"):], 1, 1,
			"invalid YAML: mapping values are not allowed in this context"},
		{"error far above the end", strings.Replace(head, "      versions:", "   versions:", 1) + tail, 7, 4,
			"invalid YAML: did not find expected key in the list or mapping that starts on line 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := loadErrors(t, map[string]string{"jobc.yaml": c.spec})
			want := fmt.Sprintf("jobc.yaml:%d:%d: %s", c.line, c.col, c.msg)
			if got != want {
				lines := strings.Split(c.spec, "\n")
				t.Errorf("got  %s\nwant %s\nline %d is %q", got, want, c.line, lines[c.line-1])
			}
		})
	}
}
