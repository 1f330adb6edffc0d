//go:build race

package badinput_test

// raceSlowdown scales caseTimeout when the race detector is on: it makes
// this code 5–10× slower (the Go documentation's figure), and the bound is
// the API server's timeout for a production build, not for an
// instrumented one. Measured: env-10000-entries-replaced takes ~0.8 s
// per handler without and ~5.5 s with the race detector.
const raceSlowdown = 10
