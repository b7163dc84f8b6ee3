// Command release keeps the repository's modules consistent with one another and
// publishes them the way a release tag would, for tests:
//
//	release [-root DIR] requires VERSION   point every require between jobc's modules, and go.work's replacements, at VERSION
//	release [-root DIR] tidy [-diff]       go mod tidy in every module, the siblings taken from the checkout
//	release [-root DIR] vet                go vet in every module with the versions its go.mod selects
//	release [-root DIR] publish VERSION DIR write every module at VERSION into DIR, laid out as a GOPROXY
//
// The modules are those go.work uses. It is a module of its own so that
// golang.org/x/mod stays out of the root module's graph.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "../..", "the repository's root (where go.work is)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	args = fs.Args()
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "release: %s\nusage: release [-root DIR] requires VERSION | tidy [-diff] | vet | publish VERSION DIR\n", msg)
		return 2
	}
	if len(args) == 0 {
		return usage("missing command")
	}
	var err error
	switch args[0] {
	case "requires":
		if len(args) != 2 {
			return usage("requires takes one VERSION")
		}
		err = SetRequires(*root, args[1])
	case "tidy":
		diff := len(args) == 2 && args[1] == "-diff"
		if len(args) > 2 || len(args) == 2 && !diff {
			return usage("tidy takes only -diff")
		}
		err = Tidy(ctx, *root, diff, stdout)
	case "vet":
		if len(args) != 1 {
			return usage("vet takes no arguments")
		}
		err = Vet(ctx, *root, stdout)
	case "publish":
		if len(args) != 3 {
			return usage("publish takes VERSION and DIR")
		}
		err = Publish(*root, args[1], args[2])
	default:
		return usage(fmt.Sprintf("unknown command %q", args[0]))
	}
	if err != nil {
		var u *usageError
		if errors.As(err, &u) {
			return usage(u.msg)
		}
		fmt.Fprintln(stderr, "release:", err)
		return 1
	}
	return 0
}

// usageError is a bad argument: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
