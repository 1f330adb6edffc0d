package linediff

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a hunk shows around a change,
// as diff -u.
const diffContext = 3

// Unified returns the unified diff (diff -u) of the lines of a and b,
// labelled from and to; "" when they are equal. The common head and tail
// are cut before the lines in between are matched, so a fix that changes
// a few lines of a large object costs little.
func Unified(from, to, a, b string) string {
	x, y := splitLines(a), splitLines(b)
	edits := lineEdits(x, y)
	hunks := groupHunks(edits)
	if len(hunks) == 0 {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	for _, h := range hunks {
		writeHunk(&out, edits[h[0]:h[1]])
	}
	return out.String()
}

// edit is one line of the diff: ' ' kept, '-' removed, '+' added, with
// its 1-based line numbers in a and b (the next line's, when absent).
type edit struct {
	op   byte
	line string
	a, b int
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// lineEdits matches x and y line by line: the common head and tail, and
// a longest common subsequence of the lines between.
func lineEdits(x, y []string) []edit {
	head := 0
	for head < len(x) && head < len(y) && x[head] == y[head] {
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	var out []edit
	for i := range head {
		out = append(out, edit{op: ' ', line: x[i], a: i + 1, b: i + 1})
	}
	out = append(out, middleEdits(x[head:len(x)-tail], y[head:len(y)-tail], head)...)
	for i := range tail {
		ai, bi := len(x)-tail+i, len(y)-tail+i
		out = append(out, edit{op: ' ', line: x[ai], a: ai + 1, b: bi + 1})
	}
	return out
}

// middleEdits diffs x and y, which start after offset equal lines, by a
// longest common subsequence.
func middleEdits(x, y []string, offset int) []edit {
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []edit
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out = append(out, edit{op: ' ', line: x[i], a: offset + i + 1, b: offset + j + 1})
			i, j = i+1, j+1
		case j == m || (i < n && lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, edit{op: '-', line: x[i], a: offset + i + 1, b: offset + j + 1})
			i++
		default:
			out = append(out, edit{op: '+', line: y[j], a: offset + i + 1, b: offset + j + 1})
			j++
		}
	}
	return out
}

// groupHunks returns the [start, end) ranges of edits that make the
// hunks: each change with diffContext kept lines around it, merged when
// they touch.
func groupHunks(edits []edit) [][2]int {
	var hunks [][2]int
	for i, e := range edits {
		if e.op == ' ' {
			continue
		}
		start, end := max(0, i-diffContext), min(len(edits), i+1+diffContext)
		if n := len(hunks); n > 0 && start <= hunks[n-1][1] {
			hunks[n-1][1] = end
			continue
		}
		hunks = append(hunks, [2]int{start, end})
	}
	return hunks
}

func writeHunk(out *strings.Builder, edits []edit) {
	aStart, bStart := edits[0].a, edits[0].b
	aLen, bLen := 0, 0
	for _, e := range edits {
		if e.op != '+' {
			aLen++
		}
		if e.op != '-' {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, e := range edits {
		fmt.Fprintf(out, "%c%s\n", e.op, e.line)
	}
}

// hunkRange is diff -u's "start,length"; an empty range starts at the
// line before it.
func hunkRange(start, length int) string {
	if length == 0 {
		start--
	}
	if length == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, length)
}
