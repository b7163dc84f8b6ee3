//go:build !race

package runtime_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
