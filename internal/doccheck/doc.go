// Package doccheck holds the tests that keep the repository's Markdown true to the
// code: every relative link and anchor resolves, the README indexes every page of
// docs/ and stays a front door, and docs/spec.md documents every key of
// jobc.schema.json. It has no code of its own.
package doccheck
