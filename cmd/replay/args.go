package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// parseArgs parses flags that may come before, between or after the
// positional arguments, and returns the positionals. For -h, -help or
// --help anywhere among the flags it returns a *helpRequest: run prints the
// usage of the subcommand fs.Name() and exits 0.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard) // run prints the usage and the errors
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, &helpRequest{fs}
			}
			return nil, usagef("%s", strings.TrimSpace(err.Error()))
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// helpRequest is the error parseArgs returns for -h: not a failure, but a
// request for the usage of the subcommand fs.Name(). It is a flag.ErrHelp.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return h.fs.Name() + ": help requested" }

func (h *helpRequest) Unwrap() error { return flag.ErrHelp }

// sizeValue is a count flag that takes 1000000, 1e6, 1M, 2.5G or 64Ki:
// suffixes k, M, G, T are powers of 1000, Ki, Mi, Gi, Ti powers of 1024.
type sizeValue uint64

func (v *sizeValue) String() string { return strconv.FormatUint(uint64(*v), 10) }

func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

// int converts for a Spec; anything over 2^62 stays out of range there.
func (v sizeValue) int() int { return int(min(uint64(v), 1<<62)) }

func parseSize(s string) (uint64, error) {
	num, mult := s, 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
		{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	if n, err := strconv.ParseUint(num, 0, 64); err == nil && mult == 1 {
		return n, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("%q is not a count (1000000, 1e6, 1M, 64Ki)", s)
	}
	f *= mult
	if f < 0 || f >= 1<<63 || f != math.Trunc(f) || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a whole number from 0 to 2^63", s)
	}
	return uint64(f), nil
}
