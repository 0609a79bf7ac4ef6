package trace

import (
	"fmt"
	"strconv"
)

// MaxLanes is the widest execution size any dialect has (PTX and SASS warps,
// LSC SIMD32).
const MaxLanes = 32

// Dialect is the instruction set a line belongs to.
type Dialect uint8

const (
	DialectInvalid Dialect = iota
	DialectPTX             // NVIDIA PTX atom
	DialectSASS            // NVIDIA SASS ATOM
	DialectVISA            // Intel vISA DWORD_ATOMIC
	DialectLSC             // Intel vISA LSC_UNTYPED
)

var dialectNames = [...]string{"invalid", "ptx", "sass", "visa", "lsc"}

func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// Op is the canonical operation, shared by every dialect that has it.
// Signedness lives in the Type, not the Op: vISA IMIN is OpMin on s32.
type Op uint8

const (
	OpInvalid Op = iota
	OpAdd
	OpSub
	OpExch
	OpCAS
	OpMin
	OpMax
	OpInc // bounded (PTX/SASS: (old >= b) ? 0 : old+1) or plain +1 (vISA/LSC); the dialect decides
	OpDec
	OpAnd
	OpOr
	OpXor
	OpPreDec // vISA PREDEC: old-1, returns the new value
	OpLoad
	OpStore
	numOps
)

var opNames = [...]string{"invalid", "add", "sub", "exch", "cas", "min", "max", "inc", "dec",
	"and", "or", "xor", "predec", "load", "store"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Type is the data type an operation works on.
type Type uint8

const (
	TypeInvalid Type = iota
	TypeB16
	TypeB32
	TypeB64
	TypeB128
	TypeU16
	TypeS16
	TypeU32
	TypeS32
	TypeU64
	TypeS64
	TypeF16
	TypeBF16
	TypeF16x2
	TypeBF16x2
	TypeF32
	TypeF64
	TypeU8
	numTypes
)

var typeNames = [...]string{"invalid", "b16", "b32", "b64", "b128", "u16", "s16", "u32", "s32",
	"u64", "s64", "f16", "bf16", "f16x2", "bf16x2", "f32", "f64", "u8"}

var typeSizes = [...]uint8{0, 2, 4, 8, 16, 2, 2, 4, 4, 8, 8, 2, 2, 4, 4, 4, 8, 1}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Size is the size of one element in bytes.
func (t Type) Size() int {
	if int(t) < len(typeSizes) {
		return int(typeSizes[t])
	}
	return 0
}

// Signed reports whether the type is a signed integer.
func (t Type) Signed() bool { return t == TypeS16 || t == TypeS32 || t == TypeS64 }

// Float reports whether the type is a (possibly packed) floating-point type.
func (t Type) Float() bool {
	switch t {
	case TypeF16, TypeBF16, TypeF16x2, TypeBF16x2, TypeF32, TypeF64:
		return true
	}
	return false
}

// ParseType reads a type name as `.init` and the output tables write it.
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if i > 0 && n == s {
			return Type(i), true
		}
	}
	return TypeInvalid, false
}

// SpaceKind is the kind of memory an access goes to.
type SpaceKind uint8

const (
	SpaceInvalid SpaceKind = iota
	SpaceGlobal            // PTX .global, SASS generic/global, vISA T255, LSC .ugm/.ugml flat
	SpaceShared            // PTX .shared{::cta}, SASS shared window, vISA T0, LSC .slm; per group
	SpaceSurface           // a binding-table surface, bti(N)
	SpaceCounter           // the append counter of surface N, apndctr(N): LSC lsc_apndctr_atomic_*
)

// Space is a memory space: a kind and, for surfaces, the binding-table index.
type Space struct {
	Kind    SpaceKind
	Surface uint32
}

var (
	Global = Space{Kind: SpaceGlobal}
	Shared = Space{Kind: SpaceShared}
)

// String gives the name used in `.tasm` directives and the output tables.
func (s Space) String() string {
	switch s.Kind {
	case SpaceGlobal:
		return "global"
	case SpaceShared:
		return "shared"
	case SpaceSurface:
		return fmt.Sprintf("bti(0x%x)", s.Surface)
	case SpaceCounter:
		return fmt.Sprintf("apndctr(0x%x)", s.Surface)
	}
	return "invalid"
}

// PerGroup reports whether each group (CTA, work-group) has its own copy of
// the space.
func (s Space) PerGroup() bool { return s.Kind == SpaceShared }

// ParseSpace reads a space as a `.region`/`.init` directive writes it.
func ParseSpace(s string) (Space, bool) {
	switch s {
	case "global":
		return Global, true
	case "shared":
		return Shared, true
	}
	for _, k := range []struct {
		prefix string
		kind   SpaceKind
	}{{"bti(", SpaceSurface}, {"apndctr(", SpaceCounter}} {
		if len(s) > len(k.prefix)+1 && s[:len(k.prefix)] == k.prefix && s[len(s)-1] == ')' {
			v, err := strconv.ParseUint(s[len(k.prefix):len(s)-1], 0, 32)
			if err != nil {
				return Space{}, false
			}
			return Space{Kind: k.kind, Surface: uint32(v)}, true
		}
	}
	return Space{}, false
}

// Region is a declared allocation: with at least one region in a space, an
// access outside every region of that space is out of bounds.
type Region struct {
	Space Space
	Base  uint64
	Size  uint64
}

// Contains reports whether [addr, addr+n) lies inside the region.
func (r Region) Contains(addr, n uint64) bool {
	return addr >= r.Base && n <= r.Size && addr-r.Base <= r.Size-n
}

// Init is initial memory contents set by `.init`.
type Init struct {
	Space Space
	Group int64 // the .group context for per-group spaces; -1 otherwise
	Addr  uint64
	Type  Type
	Data  []byte // little-endian, len is a multiple of Type.Size()
}

// Window is a range of the generic (flat) address space that maps to a
// space other than global: NVIDIA's shared and local windows. A SASS ATOM
// into one faults with invalid_space (CUDA Binary Utilities, ATOM: "An ATOM instruction
// must address global memory, otherwise it generates an invalid address
// space error"). Declared with `.window shared|local BASE SIZE`.
type Window struct {
	Kind string // "shared" or "local"
	Base uint64
	Size uint64
}

// Contains reports whether addr lies in the window.
func (w Window) Contains(addr uint64) bool { return addr >= w.Base && addr-w.Base < w.Size }

// Directive is memory set-up met after the first instruction, taking effect
// at its place in trace order (TASM.md puts no limit on where .init and
// .region stand):
//
//   - a .init is a host write between two instructions: every earlier
//     instruction's accesses to its bytes are applied before it and no
//     later one's (a cudaMemcpy or a counter reset between two kernels);
//   - a .region declares memory from that point on: later accesses are
//     judged against it, earlier ones are not judged again.
//
// A third kind labels rather than sets up memory:
//
//   - a .cluster places the current .group in a thread-block cluster
//     (Hopper's clusters, PTX .cluster scope) from that point on.
//
// Exactly one of Init, Region and Cluster is set. Directives before the
// first instruction are not Directives: they make the [Header]; .cluster
// is the exception, a Directive wherever it stands (a cluster belongs to
// the instructions after it, like the .group it labels), and it ends the
// header as the first instruction does.
type Directive struct {
	Init    *Init
	Region  *Region
	Cluster *Cluster
	// Fold is a combined split file's folded accesses (split files only:
	// see Fold).
	Fold *Fold
}

// Cluster places a group in a thread-block cluster, written `.cluster ID`
// after `.group GROUP` (TASM.md). The races table's .cluster scope counts
// two groups in one cluster when their latest .cluster named the same ID;
// a group never named falls back to the replay's -cluster-size.
type Cluster struct {
	Group int64 // the .group context
	ID    int64 // 0 to 2^40
}

// Header is what a trace declares before its first instruction.
type Header struct {
	Regions []Region
	Inits   []Init
	Windows []Window
	// AddressOnly marks a trace that carries addresses but no operand
	// values: one imported from a tracer that records only where each
	// lane went (Accel-Sim's .traceg, NVBit's mem_trace). Its address and
	// predicate inputs are bound; its data inputs (RoleSrcB, RoleSrcC)
	// read as zero and mean nothing. Written `.addresses-only` (TASM.md),
	// header flag 1 (FORMAT.md).
	AddressOnly bool
	// PartitionMap is the partition map of a split trace's partition
	// (SplitHeader.Lines), which a reader of its slices (split.Source)
	// puts here so that its partitioned replay owns the lines the split
	// sent it; nil for any other trace. A writer does not write it.
	PartitionMap []SplitLine
}

// Valued reports whether an input carries a value in a trace of this
// header: every input does, except the data inputs of an address-only
// trace.
func (h *Header) Valued(in *Input) bool {
	return !h.AddressOnly || in.Role == RoleAddr || in.Role == RolePred
}

// add appends a directive met before the first instruction.
func (h *Header) add(d *Directive) {
	switch {
	case d.Init != nil:
		h.Inits = append(h.Inits, *d.Init)
	case d.Region != nil:
		h.Regions = append(h.Regions, *d.Region)
	}
}
