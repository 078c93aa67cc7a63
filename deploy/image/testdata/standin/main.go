// A stand-in for the gateway binary in the image tests: static, quick to
// build, and it answers --version with its stamp as the gateway does.
package main

import (
	"fmt"
	"os"
)

var stamped = "unstamped"

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "version") {
		fmt.Printf("Switchyard %s\n", stamped)
		return
	}
	fmt.Fprintf(os.Stderr, "stand-in: %q\n", os.Args[1:])
	os.Exit(2)
}
