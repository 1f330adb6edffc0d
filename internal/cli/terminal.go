package cli

import (
	"fmt"
	"os"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ANSI colors, for terminals only (see Colored).
const (
	// ColorRed marks what fails: a deny, a drifted field.
	ColorRed = "\x1b[31m"
	// ColorYellow marks what warns: a warning, a repair, an orphan.
	ColorYellow = "\x1b[33m"
	colorReset  = "\x1b[0m"
)

// Colored wraps s in color when on is set and color is not empty.
func Colored(on bool, color, s string) string {
	if !on || color == "" {
		return s
	}
	return color + s + colorReset
}

// Plural counts n of what: "1 finding", "2 findings".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
