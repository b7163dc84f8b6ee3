//go:build race

package runtime_test

// raceEnabled says the tests run under the race detector, which also drops sync.Pool
// items at random: allocation counts of code that pools (encoding/json does) vary
// from run to run there.
const raceEnabled = true
