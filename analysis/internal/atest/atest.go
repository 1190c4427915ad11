// Package atest has test helpers shared by the analysis packages.
package atest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/mcpredict/mcpredict/gen"
)

// RandomWithRegions returns the random trace of seed, rewritten so that
// every thread has Begin/End regions (label "r") and Enter/Exit frames
// (function "f") around runs of its events, for robustness tests of the
// transaction-based analyses. Some rewritten traces are not valid (a cond
// wait must directly follow a takeover); callers skip those that do not
// parse.
func RandomWithRegions(seed int64, labels bool) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindRandom, Seed: seed}); err != nil {
		return nil, err
	}
	open, close := "Enter", "Exit"
	name := "f"
	if labels {
		open, close, name = "Begin", "End", "r"
	}
	var out bytes.Buffer
	count := map[string]int{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		th := strings.TrimSpace(strings.SplitN(line, ",", 2)[0])
		i := count[th]
		count[th]++
		if i%3 == 0 {
			fmt.Fprintf(&out, "%s, 0, r.c-%d, %s, %s\n", th, 900+int(seed%7), open, name)
		}
		out.WriteString(line + "\n")
		if i%3 == 2 {
			fmt.Fprintf(&out, "%s, 0, r.c-%d, %s, %s\n", th, 950, close, name)
		}
	}
	return out.Bytes(), sc.Err()
}
