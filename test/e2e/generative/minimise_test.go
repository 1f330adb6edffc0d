package generative_test

// minimise returns a shortest subsequence of steps (keeping their order)
// for which fails still reports true, by delta debugging (Zeller's ddmin):
// it tries to drop chunks of halving size, then single steps, and keeps
// each removal that still fails. It calls fails at most budget times; what
// it has when the budget runs out is still a failing sequence. steps must
// fail.
func minimise[T any](steps []T, fails func([]T) bool, budget int) []T {
	cur := append([]T(nil), steps...)
	calls := 0
	try := func(candidate []T) bool {
		if calls >= budget {
			return false
		}
		calls++
		return fails(candidate)
	}
	n := 2
	for len(cur) >= 2 && calls < budget {
		chunk := (len(cur) + n - 1) / n
		reduced := false
		for start := 0; start < len(cur); start += chunk {
			end := min(start+chunk, len(cur))
			candidate := append(append([]T(nil), cur[:start]...), cur[end:]...)
			if len(candidate) > 0 && try(candidate) {
				cur, reduced = candidate, true
				n = max(n-1, 2)
				break
			}
		}
		if reduced {
			continue
		}
		if chunk == 1 {
			break
		}
		n = min(2*n, len(cur))
	}
	return cur
}
