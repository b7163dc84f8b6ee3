package generator_test

// The golden case formats_and_overrides maps format uuid to
// github.com/google/uuid, and TestGolden vets the generated package. That
// package lives under testdata/, where go mod tidy does not look, so this
// import is what keeps the module in the root go.mod. It is a test
// dependency of the generator: importers of the runtime do not pay for it.
import _ "github.com/google/uuid"
