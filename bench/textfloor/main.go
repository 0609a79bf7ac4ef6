// Command textfloor is the floor of reading a `.tasm` trace: the least work
// any text reader must do. It reads the file, splits it into lines and
// parses every integer after each line's `|` (decimal or 0x hex, in a list
// or alone), on one goroutine, and prints how many it parsed, their sum and
// the time taken. docs/PERFORMANCE.md holds the text reader to a multiple
// of it.
//
//	go run ./bench/textfloor FILE.tasm
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: textfloor FILE.tasm")
		os.Exit(2)
	}
	start := time.Now()
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "textfloor:", err)
		os.Exit(1)
	}
	defer f.Close()
	n, sum, err := scan(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "textfloor:", err)
		os.Exit(1)
	}
	fmt.Printf("%d integers, sum %#x, %.3fs\n", n, sum, time.Since(start).Seconds())
}

// scan returns the count and sum of the integers after `|` on every line.
func scan(r io.Reader) (n int, sum uint64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		bar := bytes.IndexByte(line, '|')
		if bar < 0 {
			continue
		}
		for i := bar + 1; i < len(line); {
			c := line[i]
			if c != '=' && c != '[' && c != ',' {
				i++
				continue
			}
			i++
			v, used := parseInt(line[i:])
			n, sum, i = n+1, sum+v, i+used
		}
	}
	return n, sum, sc.Err()
}

// parseInt reads a decimal or 0x hex integer from the start of b, returning
// it and how many bytes it used.
func parseInt(b []byte) (v uint64, used int) {
	if len(b) > 1 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		i := 2
		for ; i < len(b); i++ {
			c := b[i]
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | uint64(c-'0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | uint64(c-'a'+10)
			case c >= 'A' && c <= 'F':
				v = v<<4 | uint64(c-'A'+10)
			default:
				return v, i
			}
		}
		return v, i
	}
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + uint64(b[i]-'0')
	}
	return v, i
}
