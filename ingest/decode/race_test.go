//go:build race

package decode

// raceEnabled is set when the race detector slows compression down ~50×.
const raceEnabled = true
