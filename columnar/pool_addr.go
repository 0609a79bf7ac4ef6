package columnar

import "unsafe"

// addrOf is the address of b's first byte, for alignment only.
func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
