package engine

import (
	"reflect"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// TestMergeHotWords: a word in two lists is one word with both estimates
// added; the merged list is the k hottest, most first, ties in space,
// group and address order.
func TestMergeHotWords(t *testing.T) {
	g := trace.Global
	hs := []HotWord{
		{Space: g, Addr: 0x100, LaneOps: 50},
		{Space: g, Addr: 0x200, LaneOps: 40},
		{Space: g, Group: 1, Addr: 0x100, LaneOps: 45},
		{Space: g, Addr: 0x200, LaneOps: 30}, // 0x200 again: 70 in all
		{Space: g, Addr: 0x300, LaneOps: 45},
	}
	want := []HotWord{
		{Space: g, Addr: 0x200, LaneOps: 70},
		{Space: g, Addr: 0x100, LaneOps: 50},
		{Space: g, Addr: 0x300, LaneOps: 45},
	}
	if got := MergeHotWords(hs, 3); !reflect.DeepEqual(got, want) {
		t.Errorf("MergeHotWords = %+v, want %+v", got, want)
	}
	if got := MergeHotWords(hs, 10); len(got) != 4 || got[3].Group != 1 {
		t.Errorf("MergeHotWords(10) = %+v, want the 4 distinct words, group 1's last", got)
	}
}
