// Command textfloor is the text floor of docs/PERFORMANCE.md: the least
// work any reader of a `.tasm` trace must do. It reads the file whole,
// splits it into lines and parses every integer bound after a line's `|`
// (hexadecimal 0x… or decimal, in a list or alone), on one goroutine, and
// prints their count and sum so that none of it can be left out.
//
//	textfloor FILE.tasm
package main

import (
	"bytes"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: textfloor FILE.tasm")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "textfloor:", err)
		os.Exit(1)
	}
	var n, sum uint64
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		bar := bytes.IndexByte(line, '|')
		if bar < 0 {
			continue
		}
		c, s := parseBindings(line[bar+1:])
		n += c
		sum += s
	}
	fmt.Println(n, sum)
}

// parseBindings parses the integers of the bindings NAME=VALUE …, where a
// value is an integer, a list [a,b,…] or base:stride: every integer after
// an '=' up to the next blank.
func parseBindings(b []byte) (n, sum uint64) {
	inValue := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			inValue = false
			i++
		case c == '=':
			inValue = true
			i++
		case inValue && c >= '0' && c <= '9':
			var v uint64
			if c == '0' && i+1 < len(b) && (b[i+1] == 'x' || b[i+1] == 'X') {
				for i += 2; i < len(b); i++ {
					d := b[i]
					switch {
					case d >= '0' && d <= '9':
						d -= '0'
					case d >= 'a' && d <= 'f':
						d -= 'a' - 10
					case d >= 'A' && d <= 'F':
						d -= 'A' - 10
					default:
						goto done
					}
					v = v<<4 | uint64(d)
				}
			} else {
				for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
					v = v*10 + uint64(b[i]-'0')
				}
			}
		done:
			n++
			sum += v
		default:
			i++
		}
	}
	return n, sum
}
