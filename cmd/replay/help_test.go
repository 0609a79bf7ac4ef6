package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace/workload"
)

// helpCases are the subcommands with their synopsis line and what their
// usage must mention.
var helpCases = []struct {
	sub      string
	synopsis string
	wants    []string
}{
	{"replay", "replay [flags] [TRACE]", []string{"-shards N", "-workers N", "-format F", "-max-memory N", "-profile KIND", "-q ", "(default 64)", "(default 4096)", "-partition P", "JOB_COMPLETION_INDEX"}},
	{"asm", "replay asm [-chunk N] IN.tasm -o OUT.zst", []string{"-chunk N", "-o FILE", "(default 65536)"}},
	{"disasm", "replay disasm IN.zst [-o OUT.tasm]", []string{"-o FILE", "(default: standard output)"}},
	{"gen", "replay gen WORKLOAD [flags] -o OUT.zst|OUT.tasm", []string{"replay gen -list", "-dialect D", "-lane-ops N", "-seed N", "-list ", "Workloads:"}},
	{"merge", "replay merge DIR... -o OUT", []string{"-o DIR", "-format F", "part=i", "missing or repeated"}},
	{"diff", "replay diff A B", []string{"-limit N", "-q ", "seq, lane, elem", "1 they differ"}},
	{"report", "replay report DIR -o FILE.html [-title T]", []string{"-o FILE", "-title T", "-q ", "whole", "SQL", "docs/REPORT.md"}},
	{"help", "replay help [SUBCOMMAND]", []string{"asm", "disasm", "gen", "merge", "diff", "report"}},
}

// TestHelpEverySubcommand: -h, --help, -help, -h after other arguments,
// and replay help SUB print SUB's usage on standard output and exit 0.
func TestHelpEverySubcommand(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range helpCases {
		wants := append([]string{tc.synopsis}, tc.wants...)
		if tc.sub == "gen" {
			for _, n := range workload.Names() {
				wants = append(wants, "  "+n+" ", workload.Describe(n))
			}
		}
		prefix := []string{tc.sub}
		after := []string{tc.sub, "x.tasm", "-o", "out.zst"}
		switch tc.sub {
		case "replay": // the default command has no name on the command line
			prefix, after = nil, []string{"-q", "x.tasm", "-shards", "8"}
		case "gen":
			after = []string{"gen", "uniform", "-lane-ops", "1e3", "-o", "out.zst"}
		case "help":
			after = []string{"help", "gen"}
		case "diff":
			after = []string{"diff", "a", "b", "-limit", "3"}
		}
		forms := [][]string{
			append(slices.Clone(prefix), "-h"),
			append(slices.Clone(prefix), "--help"),
			append(slices.Clone(prefix), "-help"),
			append(slices.Clone(after), "-h"),
			{"help", tc.sub},
		}
		for _, args := range forms {
			code, out, errOut := replayCmd(t, args...)
			if code != exitOK || errOut != "" {
				t.Errorf("replay %s: exit %d, stderr %q; want exit 0 and no stderr", strings.Join(args, " "), code, errOut)
			}
			for _, w := range wants {
				if !strings.Contains(out, w) {
					t.Errorf("replay %s: stdout lacks %q:\n%s", strings.Join(args, " "), w, out)
				}
			}
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("-h wrote files: %v", ents)
	}
}

// TestHelpSameTextEveryForm: every way of asking prints the same usage;
// for replay itself, -h prints the overview, which holds all of replay
// help replay's flag lines.
func TestHelpSameTextEveryForm(t *testing.T) {
	_, overview, _ := replayCmd(t, "help")
	for _, tc := range helpCases {
		_, want, _ := replayCmd(t, "help", tc.sub)
		if tc.sub == "replay" {
			for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"x.tasm", "-h"}} {
				if _, out, _ := replayCmd(t, args...); out != overview {
					t.Errorf("replay %s does not print the overview (replay help):\n%s", strings.Join(args, " "), out)
				}
			}
			flags := flagLines(want)
			if len(flags) != 20 {
				t.Errorf("replay help replay lists %d flags, want 20:\n%s", len(flags), want)
			}
			for _, l := range flags {
				if !strings.Contains(overview, l+"\n") {
					t.Errorf("the overview lacks replay's flag line %q", l)
				}
			}
			continue
		}
		for _, h := range []string{"-h", "--help", "-help"} {
			if _, out, _ := replayCmd(t, tc.sub, h); out != want {
				t.Errorf("replay %s %s differs from replay help %s:\n%s\nwant:\n%s", tc.sub, h, tc.sub, out, want)
			}
		}
	}
}

// TestHelpOverview: replay help lists every subcommand's synopsis and
// points at replay help SUBCOMMAND.
func TestHelpOverview(t *testing.T) {
	code, out, errOut := replayCmd(t, "help")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, tc := range helpCases {
		if !strings.Contains(out, "  "+tc.synopsis) {
			t.Errorf("the overview lacks %q:\n%s", tc.synopsis, out)
		}
	}
	for _, w := range []string{"replay help SUBCOMMAND", "Replay flags:", "Exit status:"} {
		if !strings.Contains(out, w) {
			t.Errorf("the overview lacks %q:\n%s", w, out)
		}
	}
	// gen's flags live in replay help gen, not in the overview.
	if strings.Contains(out, "-dialect") {
		t.Errorf("the overview lists gen's flags:\n%s", out)
	}
}

// TestHelpUsageErrors: an unknown subcommand, or two, are usage errors
// that name what is wrong; a usage error inside a subcommand points at its help.
func TestHelpUsageErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"help", "nosuch"}, []string{`replay: help: unknown subcommand "nosuch"; the subcommands are replay, asm, disasm, gen, import, merge, split, diff, report, help`, "run 'replay help' for usage"}},
		{[]string{"help", "gen", "asm"}, []string{"help takes one subcommand, got 2: gen asm"}},
		{[]string{"help", "-x"}, []string{"flag provided but not defined: -x"}},
		{[]string{"gen", "-bogus"}, []string{"flag provided but not defined: -bogus", "run 'replay help gen' for usage"}},
		{[]string{"asm", "x.tasm"}, []string{"asm needs -o OUT.zst", "run 'replay help asm' for usage"}},
		{[]string{"disasm"}, []string{"disasm takes one input trace", "run 'replay help disasm' for usage"}},
		{[]string{"-bogus"}, []string{"flag provided but not defined: -bogus", "run 'replay help' for usage"}},
	} {
		code, out, errOut := replayCmd(t, tc.args...)
		if code != exitUsage || out != "" {
			t.Errorf("replay %s: exit %d, stdout %q; want exit 2 and no stdout", strings.Join(tc.args, " "), code, out)
		}
		for _, w := range tc.wants {
			if !strings.Contains(errOut, w) {
				t.Errorf("replay %s: stderr %q lacks %q", strings.Join(tc.args, " "), errOut, w)
			}
		}
	}
}

// TestUsageListsEveryFlag: each subcommand's usage lists exactly the flags
// its flag set defines, so the text cannot drift from the code.
func TestUsageListsEveryFlag(t *testing.T) {
	cmds := map[string]func([]string) error{
		"replay": func(a []string) error { return cmdReplay(a, io.Discard, io.Discard) },
		"asm":    func(a []string) error { return cmdAsm(a, io.Discard, io.Discard) },
		"disasm": func(a []string) error { return cmdDisasm(a, io.Discard, io.Discard) },
		"gen":    func(a []string) error { return cmdGen(a, io.Discard, io.Discard) },
		"import": func(a []string) error { return cmdImport(a, io.Discard, io.Discard) },
		"merge":  func(a []string) error { return cmdMerge(a, io.Discard, io.Discard) },
		"split":  func(a []string) error { return cmdSplit(a, io.Discard, io.Discard) },
		"diff":   func(a []string) error { return cmdDiff(a, io.Discard, io.Discard) },
		"report": func(a []string) error { return cmdReport(a, io.Discard, io.Discard) },
		"help":   func(a []string) error { return cmdHelp(a, io.Discard) },
	}
	if names := commandNames(); len(names) != len(cmds) {
		t.Fatalf("commands %v, want the %d tested here", names, len(cmds))
	}
	for _, name := range commandNames() {
		err := cmds[name]([]string{"-h"})
		var hr *helpRequest
		if !errors.As(err, &hr) || !errors.Is(err, flag.ErrHelp) || hr.fs.Name() != name {
			t.Fatalf("%s -h returned %v, want a help request for %s", name, err, name)
		}
		_, usage, _ := replayCmd(t, "help", name)
		var listed []string
		for _, l := range flagLines(usage) {
			listed = append(listed, strings.TrimPrefix(strings.Fields(l)[0], "-"))
		}
		var defined []string
		hr.fs.VisitAll(func(f *flag.Flag) { defined = append(defined, f.Name) })
		slices.Sort(listed)
		if !slices.Equal(listed, defined) {
			t.Errorf("replay help %s lists flags %v; the flag set defines %v", name, listed, defined)
		}
	}
}

// flagLines are the lines of a usage's Flags section that name a flag.
func flagLines(usage string) []string {
	_, sect, ok := strings.Cut(usage, "\nFlags:\n")
	if !ok {
		return nil
	}
	sect, _, _ = strings.Cut(sect, "\n\n")
	var ls []string
	for _, l := range strings.Split(sect, "\n") {
		if strings.HasPrefix(l, "  -") {
			ls = append(ls, l)
		}
	}
	return ls
}
