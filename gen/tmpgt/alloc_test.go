package gt

import (
	"context"
	"testing"
	"fmt"
	"io"

	"github.com/mcpredict/mcpredict/gen"
)

func TestAlloc(t *testing.T) {
	for _, k := range gen.Kinds() {
		for _, n := range []int64{200000, 2000000} {
			c := gen.Config{Kind: k, Threads: 4, Bugs: 4, Seed: 1, Events: n}
			a := testing.AllocsPerRun(1, func() { gen.Write(context.Background(), io.Discard, c) })
			fmt.Println(k, n, a)
		}
	}
}
