package bench

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// benchLaneOps is the size of the traces of this run: LaneOps, ShortLaneOps
// under -short, or REPLAY_BENCH_LANEOPS (an integer or a float like 1e6).
func benchLaneOps() uint64 {
	if s := os.Getenv("REPLAY_BENCH_LANEOPS"); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 1 {
			return uint64(f)
		}
		fmt.Fprintf(os.Stderr, "bench: REPLAY_BENCH_LANEOPS=%q is not a count; using %d\n", s, LaneOps)
	}
	if testing.Short() {
		return ShortLaneOps
	}
	return LaneOps
}

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		// A configuration line of the benchmark format: the report reads
		// it, and a run at another size is never mistaken for the standard.
		fmt.Printf("laneops: %d\n", benchLaneOps())
	}
	os.Exit(m.Run())
}

var (
	tracesMu sync.Mutex
	traces   = map[string]*Trace{}
)

// getTrace builds a benchmark trace once per process (and once per
// `make bench`, through REPLAY_BENCH_CACHE), and keeps it outside the Go
// heap (outsideHeap), so that a benchmarked replay collects garbage as
// often as the command does.
func getTrace(tb testing.TB, name string) *Trace {
	tracesMu.Lock()
	defer tracesMu.Unlock()
	if t := traces[name]; t != nil {
		return t
	}
	t, err := GenerateCached(os.Getenv("REPLAY_BENCH_CACHE"), name, benchLaneOps())
	if err != nil {
		tb.Fatal(err)
	}
	t.Data = outsideHeap(t.Data)
	traces[name] = t
	return t
}

var denseSink uint32

// BenchmarkLimit is the limit each replay is measured against, per trace:
//
//	zstd-cli  `zstd -d -c -q FILE >/dev/null` on the trace file (process
//	          start included: it is what a user runs)
//	dense     the bare Go loop mem[idx[i]] += val[i] over the trace's lanes,
//	          decoded beforehand into flat []uint32 word indices and values,
//	          on a []uint32 the size of the trace's region, allocated and
//	          touched before the timer: the loop only
//	reader    (for information) our binary reader decoding every
//	          instruction and operand vector, as a replay reads it
//	addr-floor (for information) the least the addresses table can add:
//	          AddressFloor, each lane-op counted into a 48-byte record of
//	          its word, on two goroutines that each own every other 4 KiB
//	          page of records (the lanes split between them beforehand),
//	          as the engine's two workers own pages; uniform-1Mi only
//	addr-floor-16 (for information) the same into 16-byte records
//	          (AddressFloor16), which a million addresses' worth fits in
//	          the L3: what the floor would be without the sketches' bytes
//
// The limit of a trace is zstd-cli + dense.
func BenchmarkLimit(b *testing.B) {
	for _, s := range Specs {
		b.Run(s.Name, func(b *testing.B) {
			t := getTrace(b, s.Name)
			b.Run("zstd-cli", func(b *testing.B) {
				if _, err := exec.LookPath("zstd"); err != nil {
					b.Skip("zstd command not in PATH")
				}
				path := filepath.Join(b.TempDir(), s.Name+".zst")
				if err := os.WriteFile(path, t.Data, 0o644); err != nil {
					b.Fatal(err)
				}
				null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				defer null.Close()
				b.SetBytes(int64(len(t.Data)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					cmd := exec.Command("zstd", "-d", "-c", "-q", path)
					cmd.Stdout = null // a file: the command writes to it directly, no pipe
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(t.LaneOps), "ns/laneop")
			})
			lanes, err := DecodeLanes(t.Data)
			if err != nil {
				b.Fatal(err)
			}
			if uint64(len(lanes.Idx)) != t.LaneOps {
				b.Fatalf("decoded %d lane-ops, the trace has %d", len(lanes.Idx), t.LaneOps)
			}
			b.Run("dense", func(b *testing.B) {
				mem := make([]uint32, lanes.Words)
				Dense(mem, lanes.Idx, lanes.Val) // page the array in, warm the caches
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					Dense(mem, lanes.Idx, lanes.Val)
				}
				b.StopTimer()
				denseSink += mem[lanes.Idx[0]]
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(t.LaneOps), "ns/laneop")
			})
			if s.Name == "uniform-1Mi" { // the report's figures; 64 Mi words would take 3 GiB of records
				b.Run("addr-floor", func(b *testing.B) {
					benchAddressFloor(b, lanes, make([]AddressRecord, lanes.Words), AddressFloor)
				})
				b.Run("addr-floor-16", func(b *testing.B) {
					benchAddressFloor(b, lanes, make([]AddressRecord16, lanes.Words), AddressFloor16)
				})
			}
			b.Run("reader", func(b *testing.B) {
				b.SetBytes(int64(len(t.Data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					r := indexReader(b, t)
					n := 0
					for {
						if _, err := r.Next(); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
						n++
					}
					if n == 0 {
						b.Fatal("no instruction")
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(t.LaneOps), "ns/laneop")
				b.ReportMetric(float64(len(t.Data)), "file-B")
			})
		})
	}
}

// The table sets of a replay. nil is the command's default (every table).
var (
	leanTables      = []string{"memory", "instructions", "ops"}
	addressesTables = []string{"memory", "instructions", "ops", "addresses"}
	resultsTables   = []string{"memory", "instructions", "ops", "results"}
)

type replayVariant struct {
	name    string
	tables  []string
	workers []int
	only    string // a trace name, or "" for every trace
	// oneCore runs the replay with GOMAXPROCS 1: every goroutine of the
	// replay (reader, workers, emit, encoders) shares one core.
	oneCore bool
}

var replayVariants = []replayVariant{
	{name: "lean", tables: leanTables, workers: []int{1, 2}},
	// One worker on one core: the baseline of the worker speed-up. One
	// worker alone still overlaps reading, computing and encoding on two
	// cores; the machine's ceiling (BenchmarkMachineScaling) is one busy
	// core against two.
	{name: "lean-1core", tables: leanTables, workers: []int{1}, only: "uniform-1Mi", oneCore: true},
	{name: "addresses", tables: addressesTables, workers: []int{2}},
	{name: "results", tables: resultsTables, workers: []int{2}, only: "uniform-1Mi"},
	{name: "all", tables: nil, workers: []int{2}},
}

// indexReader reads t through its seek table (trace.OpenBinaryIndex), as
// the command reads a trace file: each chunk read whole, at its offset,
// into its buffer, rather than streamed through a bufio.Reader in pieces
// (trace.NewBinaryReader, for pipes).
func indexReader(tb testing.TB, t *Trace) *trace.BinaryReader {
	x, err := trace.OpenBinaryIndex(bytes.NewReader(t.Data), int64(len(t.Data)))
	if err != nil {
		tb.Fatal(err)
	}
	r, err := x.Reader(0, x.NumChunks())
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// replayOnce replays t into Parquet tables in dir through columnar, as
// `replay -tables T -workers W -o dir t.zst` does, the trace read from
// memory through its seek table as the command reads the file.
func replayOnce(tb testing.TB, t *Trace, dir string, tables []string, workers int, more ...engine.Option) engine.Summary {
	src := indexReader(tb, t)
	defer src.Close()
	var opts []columnar.Option
	if tables != nil {
		opts = append(opts, columnar.WithTables(tables...))
	}
	sink, err := columnar.New(dir, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	sum, err := engine.Replay(src, sink, append([]engine.Option{engine.WithWorkers(workers)}, more...)...)
	if err != nil {
		tb.Fatal(err)
	}
	if sum.LaneOps != t.LaneOps || sum.Faults != 0 {
		tb.Fatalf("replayed %d lane-ops with %d faults, want %d and none", sum.LaneOps, sum.Faults, t.LaneOps)
	}
	return sum
}

// benchAddressFloor times floor over the lanes on two goroutines, each
// counting the lanes of every other 4 KiB page of words into recs.
func benchAddressFloor[R any](b *testing.B, lanes *Lanes, recs []R, floor func(recs []R, idx, val []uint32)) {
	var idx, val [2][]uint32
	for i, x := range lanes.Idx {
		o := x >> 10 & 1 // the page of 1024 words
		idx[o], val[o] = append(idx[o], x), append(val[o], lanes.Val[i])
	}
	both := func() {
		var wg sync.WaitGroup
		for o := range idx {
			wg.Go(func() { floor(recs, idx[o], val[o]) })
		}
		wg.Wait()
	}
	both() // page the records in, warm the caches
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		both()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lanes.Idx)), "ns/laneop")
}

// BenchmarkReplay/<trace>/<tables>/workers=N is a whole replay of a
// benchmark trace into a temporary directory, through columnar (Parquet):
//
//	lean       -tables memory,instructions,ops
//	lean-1core lean on one core (GOMAXPROCS 1; uniform-1Mi only)
//	addresses  lean and the addresses table
//	results    lean and the results table (uniform-1Mi only)
//	all        the default tables (for information)
//
// Before each replay, outside the timer, the heap is returned to the OS
// (debug.FreeOSMemory), so a replay starts as a new process does. Besides
// the time it reports ns/laneop, words (the distinct words the replay
// touched: its memory table's rows) and, on Linux, peakRSS-B: the highest
// resident set during the replay above the one before it (VmHWM after
// writing 5 to /proc/self/clear_refs), which is what the replay itself
// needs, without the test binary and the traces held in memory.
func BenchmarkReplay(b *testing.B) {
	for _, s := range Specs {
		b.Run(s.Name, func(b *testing.B) {
			t := getTrace(b, s.Name)
			for _, v := range replayVariants {
				if v.only != "" && v.only != s.Name {
					continue
				}
				b.Run(v.name, func(b *testing.B) {
					for _, w := range v.workers {
						b.Run("workers="+strconv.Itoa(w), func(b *testing.B) {
							if v.oneCore {
								defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
							}
							benchReplay(b, t, v.tables, w)
						})
					}
				})
			}
		})
	}
}

func benchReplay(b *testing.B, t *Trace, tables []string, workers int, more ...engine.Option) {
	root := b.TempDir()
	b.SetBytes(int64(len(t.Data)))
	b.ReportAllocs()
	var sum engine.Summary
	var peak int64
	peakOK := true
	handoff := 0.0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(root, strconv.Itoa(i))
		handoff = max(handoff, HandoffNs())
		debug.FreeOSMemory()
		before, ok := rssBytes("VmRSS")
		ok = ok && resetPeakRSS()
		b.StartTimer()
		sum = replayOnce(b, t, dir, tables, workers, more...)
		b.StopTimer()
		hwm, ok2 := rssBytes("VmHWM")
		if peakOK = peakOK && ok && ok2; peakOK {
			peak = max(peak, hwm-before)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(t.LaneOps), "ns/laneop")
	b.ReportMetric(float64(sum.Words), "words")
	if peakOK {
		b.ReportMetric(float64(peak), "peakRSS-B")
	}
	if handoff > 0 {
		b.ReportMetric(handoff, "handoff-ns")
	}
}

// resetPeakRSS resets the kernel's high-water mark of this process's
// resident set (Linux 4.0 and later); false where it cannot.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// rssBytes reads a field (VmRSS, VmHWM) of /proc/self/status.
func rssBytes(field string) (int64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}

// BenchmarkMachineScaling is the baseline for the worker speed-up: the
// same total work (a multiply-add and a write into a table) split over one
// or two goroutines that share nothing. Its two-to-one ratio is what two
// cores of this machine give independent work at all, the ceiling for
// BenchmarkReplay's workers=2 over workers=1 (the report uses the 4 MiB
// table, words=1048576, the size of uniform-1Mi's region).
func BenchmarkMachineScaling(b *testing.B) {
	const n = 1 << 24
	for _, words := range []int{1 << 12, 1 << 20} {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("words=%d/goroutines=%d", words, g), func(b *testing.B) {
				mems := make([][]uint32, g)
				for i := range mems {
					mems[i] = make([]uint32, words)
				}
				for i := 0; i < b.N; i++ {
					var wg sync.WaitGroup
					for _, mem := range mems {
						wg.Go(func() { ScalingWork(mem, n/g) })
					}
					wg.Wait()
				}
			})
		}
	}
}

// TestDenseMatchesReplay checks the limit's loop against the engine: over
// the lanes DecodeLanes gives, the dense loop leaves exactly the memory a
// replay leaves, so the two do the same work.
func TestDenseMatchesReplay(t *testing.T) {
	const n = 1 << 14
	for _, s := range Specs {
		t.Run(s.Name, func(t *testing.T) {
			tr, err := Generate(s.Name, n)
			if err != nil {
				t.Fatal(err)
			}
			lanes, err := DecodeLanes(tr.Data)
			if err != nil {
				t.Fatal(err)
			}
			if uint64(len(lanes.Idx)) != tr.LaneOps || tr.LaneOps < n {
				t.Fatalf("%d lanes decoded, %d lane-ops generated, want at least %d", len(lanes.Idx), tr.LaneOps, n)
			}
			mem := make([]uint32, lanes.Words)
			Dense(mem, lanes.Idx, lanes.Val)
			src, err := trace.NewBinaryReader(bytes.NewReader(tr.Data))
			if err != nil {
				t.Fatal(err)
			}
			base := src.Header().Regions[0].Base
			var c engine.Collector
			if _, err := engine.Replay(src, &c, engine.WithWorkers(2)); err != nil {
				t.Fatal(err)
			}
			touched := map[uint32]bool{}
			for _, w := range c.Words {
				i := uint32((w.Addr - base) / 4)
				touched[i] = true
				if mem[i] != w.Value {
					t.Fatalf("word %d: dense %d, replay %d", i, mem[i], w.Value)
				}
			}
			for _, i := range lanes.Idx {
				if !touched[i] {
					t.Fatalf("word %d: in the lanes, not in the replay's memory", i)
				}
			}
		})
	}
}

// TestReplayHarness: each replay variant writes exactly its tables, by
// name, each with the rows the trace makes, counted from the trace itself
// (DecodeLanes and a pass of the binary reader), not from the replay:
// memory and addresses a row per distinct word, results a row per lane,
// instructions a row per instruction, ops a row per (dialect, op, type,
// space).
func TestReplayHarness(t *testing.T) {
	tr, err := Generate("histogram", 1<<12)
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := DecodeLanes(tr.Data)
	if err != nil {
		t.Fatal(err)
	}
	words := map[uint32]bool{}
	for _, x := range lanes.Idx {
		words[x] = true
	}
	r, err := trace.NewBinaryReader(bytes.NewReader(tr.Data))
	if err != nil {
		t.Fatal(err)
	}
	insts, kinds := 0, map[string]bool{}
	for {
		in, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s := in.Static
		insts++
		kinds[fmt.Sprint(s.Dialect, s.Op, s.Type, s.Space)] = true
	}
	rows := map[string]int64{
		"memory":       int64(len(words)),
		"addresses":    int64(len(words)),
		"results":      int64(len(lanes.Idx)),
		"instructions": int64(insts),
		"ops":          int64(len(kinds)),
	}
	if len(words) < 100 || insts < 100 {
		t.Fatalf("the trace touches %d words in %d instructions: too few to tell the tables apart", len(words), insts)
	}
	for _, v := range replayVariants {
		dir := filepath.Join(t.TempDir(), v.name)
		replayOnce(t, tr, dir, v.tables, 2)
		want := slices.Clone(v.tables)
		if want == nil {
			want = columnar.TableNames()
		}
		slices.Sort(want)
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), ".parquet"); ok {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: tables %v, want %v", v.name, got, want)
		}
		for _, name := range got {
			n := parquetRows(t, filepath.Join(dir, name+".parquet"))
			if w, ok := rows[name]; !ok || n != w {
				t.Errorf("%s: %s.parquet has %d rows, want %d", v.name, name, n, w)
			}
		}
	}
}

// parquetRows is the row count a Parquet file's footer gives.
func parquetRows(t *testing.T, path string) int64 {
	t.Helper()
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.NumRows()
}

// TestHandoffNs: the cross-core round trip is a time a cache line can
// take between two cores, more than a few ns and less than a scheduler's
// time slice, on two Ps; 0, not measured, on one.
func TestHandoffNs(t *testing.T) {
	func() {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
		if ns := HandoffNs(); ns < 5 || ns > 1e6 {
			t.Errorf("HandoffNs on two Ps = %.1f ns, want 5 ns to 1 ms", ns)
		}
	}()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if ns := HandoffNs(); ns != 0 {
		t.Errorf("HandoffNs on one P = %.1f ns, want 0", ns)
	}
}
