package generator_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

// TestSchemaLiteralIsTheLockedSchema checks that the schema each generated version
// carries, written indented for reading, is the canonical schema jobc.lock hashes once
// its whitespace is compacted (as runtime.NewJobType compacts it): the layout of the
// literal changes no lock hash and no meaning. Every version of every job and event of
// the golden cases and examples/shop is checked, each written over several lines.
func TestSchemaLiteralIsTheLockedSchema(t *testing.T) {
	dirs := append(goldenCases(t), filepath.Join("..", "examples", "shop"))
	checked := 0
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "error.txt")); err == nil {
			continue
		}
		p, err := spec.Load(dir)
		if err != nil {
			t.Fatalf("%s: load: %v", dir, err)
		}
		lock, err := contract.Lock(p)
		if err != nil {
			t.Fatalf("%s: lock: %v", dir, err)
		}
		res, err := generator.Generate(context.Background(), dir)
		if err != nil {
			t.Fatalf("%s: generate: %v", dir, err)
		}
		files := map[string][]byte{}
		for _, f := range res.Files {
			files[filepath.Base(f.Path)] = f.Content
		}
		for _, sec := range []struct {
			suffix    string
			contracts map[string]*contract.LockedJob
			field     string // of the type literal, holding the versions
		}{{".jobc.go", lock.Jobs, "Versions"}, {generator.EventFileSuffix, lock.Events, "Versions"}, {".jobc.go", lock.Results, "ResultVersions"}} {
			for name, lj := range sec.contracts {
				file := name + sec.suffix
				src, ok := files[file]
				if !ok {
					t.Errorf("%s: no generated %s", dir, file)
					continue
				}
				got := versionSchemas(t, file, src, sec.field)
				for _, v := range lj.Versions {
					lit, ok := got[v.Version]
					if !ok {
						t.Errorf("%s: %s has no schema for version %d", dir, file, v.Version)
						continue
					}
					if !strings.Contains(lit, "\n") {
						t.Errorf("%s: %s version %d: the schema is on one line:\n%s", dir, file, v.Version, lit)
					}
					var compact bytes.Buffer
					if err := json.Compact(&compact, []byte(lit)); err != nil {
						t.Errorf("%s: %s version %d: the schema is not JSON: %v\n%s", dir, file, v.Version, err, lit)
						continue
					}
					sum := sha256.Sum256(compact.Bytes())
					if h := hex.EncodeToString(sum[:]); h != v.SHA256 {
						t.Errorf("%s: %s version %d: the compacted schema hashes to %s, the lock to %s\ngenerated: %s\nlocked:    %s", dir, file, v.Version, h, v.SHA256, compact.Bytes(), v.Schema)
					}
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no schema checked")
	}
}

// versionSchemas returns the Schema of each {Number: n, Schema: ...} literal of src.
func versionSchemas(t *testing.T, name string, src []byte, field string) map[int]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	// The versions of the type literal's field: Versions (a payload's) or
	// ResultVersions.
	var versions ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if key, _ := kv.Key.(*ast.Ident); key != nil && key.Name == field {
				versions = kv.Value
				return false
			}
		}
		return versions == nil
	})
	out := map[int]string{}
	if versions == nil {
		return out
	}
	ast.Inspect(versions, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		number, schema := -1, ""
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			val, _ := kv.Value.(*ast.BasicLit)
			if key == nil || val == nil {
				continue
			}
			switch key.Name {
			case "Number":
				number, _ = strconv.Atoi(val.Value)
			case "Schema":
				if schema, err = strconv.Unquote(val.Value); err != nil {
					t.Fatalf("%s: Schema %s: %v", name, val.Value, err)
				}
			}
		}
		if number >= 0 && schema != "" {
			out[number] = schema
		}
		return true
	})
	return out
}
