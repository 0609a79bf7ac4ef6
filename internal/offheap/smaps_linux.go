package offheap

import (
	"fmt"
	"os"
	"strings"
)

// Mapping returns the VmFlags (as "rd wr mr mw me ac hg", say) and the size
// of the mapping of /proc/self/smaps that holds addr: "" and 0 when none
// does. It is how a test sees that memory was advised into huge pages
// ("hg": MADV_HUGEPAGE), on Linux only.
func Mapping(addr uintptr) (flags string, size int, err error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return "", 0, err
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			if in = lo <= addr && addr < hi; in {
				size = int(hi - lo)
			}
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), size, nil
		}
	}
	return "", 0, nil
}
