// The release tool is a module of its own so that golang.org/x/mod stays out of the
// root module's graph.
module github.com/jobc-dev/jobc/internal/release

go 1.25.0

require golang.org/x/mod v0.40.0
