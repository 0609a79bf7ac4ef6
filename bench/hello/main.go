// Command hello is a Go "hello world": the start-up that `replay help` is
// measured against by bench/e2e (docs/PERFORMANCE.md).
package main

import "fmt"

func main() { fmt.Println("hello, world") }
