package trace

import (
	"fmt"
	"strings"
)

// formOpNames is the operations of dialect d as its document writes them, in
// its table's order, each once: what an unknown-operation error lists.
func formOpNames(d Dialect) []string {
	var names []string
	seen := map[string]bool{}
	for _, f := range Forms(d) {
		if !seen[f.Name] {
			seen[f.Name] = true
			names = append(names, f.Name)
		}
	}
	return names
}

// unknownOp is the error for an operation that dialect d does not have,
// the same in every dialect: the name as written, at off (the first byte
// of the name), the operations d has, and the closest of them when one is
// close. what names the instruction ("PTX atom", "SASS ATOM", …) and
// prefix is what the text writes before an operation ("." or "lsc_").
func unknownOp(off int, d Dialect, what, prefix, name string) error {
	names := formOpNames(d)
	msg := fmt.Sprintf("unknown %s operation %s%s (%s)", what, prefix, name, strings.Join(names, " "))
	if c := closest(name, names); c != "" {
		msg += fmt.Sprintf("; did you mean %s%s?", prefix, c)
	}
	return errAt(off, "%s", msg)
}

// closest returns the candidate nearest to word in edit distance, letter
// case ignored, or "" when none is close: one edit away (two for a word
// of six letters or more), and fewer edits than word has letters. Of
// equally near candidates it takes the one that shares the longest prefix
// with word, then the first.
func closest(word string, candidates []string) string {
	w := strings.ToLower(word)
	best, bestDist, bestPre := "", 3, -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := EditDistance(w, lc)
		if d > 1 && (d > 2 || len(w) < 6) || d >= len(w) {
			continue
		}
		pre := 0
		for pre < len(w) && pre < len(lc) && w[pre] == lc[pre] {
			pre++
		}
		if d < bestDist || d == bestDist && pre > bestPre {
			best, bestDist, bestPre = c, d, pre
		}
	}
	return best
}

// EditDistance is the number of single-byte insertions, deletions,
// substitutions and swaps of two neighbours that turn a into b (the
// optimal string alignment distance): a swap is one typo, not two. The
// parsers suggest operations by it, and the command its subcommands.
func EditDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j], three rows kept.
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
