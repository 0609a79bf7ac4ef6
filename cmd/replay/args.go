package main

import (
	"flag"
	"io"
	"strings"
)

// parseArgs parses flags that may come before, between or after the
// positional arguments, and returns the positionals.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, err
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
